// The shape of one entry of the endpoint table (openapi-endpoints.ts, openapi-image.ts) that openapi.ts documents.
import type { ErrorCode } from '../errors.ts';

type JsonObject = Record<string, unknown>;

export interface Endpoint {
  method: 'get' | 'post';
  path: string;
  operationId: string;
  tag: 'Images' | 'Accounts and keys' | 'Billing' | 'Operations';
  summary: string;
  description?: string;
  /** Bearer API key required (adds missing_api_key and invalid_api_key). */
  auth?: boolean;
  parameters?: JsonObject[];
  requestBody?: JsonObject;
  success: {
    status: number;
    description: string;
    schema?: string;
    content?: JsonObject;
    headers?: JsonObject;
  };
  /** Error codes this endpoint answers with (internal_error is added to all). */
  errors: ErrorCode[];
  errorDescriptions?: Partial<Record<ErrorCode, string>>;
}
