// Next builds no app without a page; the bench requests only /_next/image.
export default function Home() {
  return null;
}
