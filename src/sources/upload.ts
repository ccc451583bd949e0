// owns: the upload source: the image a request carried (multipart file part or raw body), read by src/http/ under
// MAX_UPLOAD_BYTES before the job asks for it.
import type { ImageSource } from './source.ts';

export interface UploadRef {
  kind: 'upload';
  bytes: Buffer;
}

export const uploadSource: ImageSource<UploadRef> = {
  kind: 'upload',
  maxBytes: (config) => config.maxUploadBytes,
  cost: 'nothing',
  read: async (ref) => ref.bytes,
};
