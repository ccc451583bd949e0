// Builds multipart/form-data bodies by hand, so tests control every byte (order, filenames, boundaries).
import { randomBytes } from 'node:crypto';

export interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
  contentType?: string;
}

export function multipartBody(parts: Part[], boundary = `----imgpipe${randomBytes(8).toString('hex')}`) {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    head += '\r\n';
    if (part.contentType) head += `Content-Type: ${part.contentType}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(part.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(chunks),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

/** The usual request: an image file part plus operations. */
export function imageForm(image: Buffer, operations: unknown = {}, filename = 'image.bin') {
  return multipartBody([
    { name: 'image', value: image, filename, contentType: 'application/octet-stream' },
    { name: 'operations', value: typeof operations === 'string' ? operations : JSON.stringify(operations) },
  ]);
}
