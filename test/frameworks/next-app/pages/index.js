import Image from 'next/image';
import { useEffect, useState } from 'react';

const SOURCE = process.env.NEXT_PUBLIC_TEST_SOURCE;

/** Rendered only in the browser, after hydration: its URLs come from the loader in the client bundle. */
function BrowserOnly() {
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);
  if (!mounted) return null;
  return (
    <Image
      id="browser"
      src={SOURCE}
      alt="rendered in the browser"
      width={600}
      height={400}
      sizes="50vw"
      loading="eager"
    />
  );
}

export default function Page() {
  return (
    <main>
      <Image
        id="server"
        src={SOURCE}
        alt="rendered on the server"
        width={600}
        height={400}
        sizes="100vw"
        priority
      />
      <BrowserOnly />
    </main>
  );
}
