// Generated from imgpipe's operations registry (src/pipeline/registry.ts) by `npm run generate:client`: do not edit.

/** Every operation's field as the API's schema accepts it (index.d.ts's Operations narrows them). */
export interface RegistryOperations {
  trim?: true | { threshold: number };
  crop?: { x: number; y: number; w: number; h: number };
  rotate?: number;
  flip?: "horizontal" | "vertical" | "both";
  resize?: { w?: number | null; h?: number | null; fit?: "inside" | "outside" | "cover" | "contain" | "fill"; position?: "center" | "attention" | "entropy" | { x: number; y: number }; dpr?: number };
  pad?: number | { top?: number; right?: number; bottom?: number; left?: number };
  background?: string;
  grayscale?: boolean;
  modulate?: { brightness?: number; saturation?: number; hue?: number };
  blur?: number;
  sharpen?: true | number;
  radius?: number | "max";
  overlay?: { name: string; gravity?: "center" | "north" | "northeast" | "east" | "southeast" | "south" | "southwest" | "west" | "northwest"; opacity?: number; width?: number; margin?: number };
  format?: "jpeg" | "png" | "webp" | "avif" | "auto";
  formats?: ("jpeg" | "png" | "webp" | "avif")[];
  quality?: number | string;
  max_bytes?: number | "input";
  placeholder?: boolean;
  strip?: boolean;
}

/** Every delivery URL option's value as deliveryUrl takes it (index.d.ts's DeliveryUrlOptions narrows them). */
export interface RegistryDeliveryOptions {
  trim?: true | number | { threshold?: number };
  crop?: true | number | { x?: number; y?: number; w?: number; h?: number };
  rotate?: number | string;
  flip?: string;
  width?: number | string;
  height?: number | string;
  fit?: string;
  position?: string | { x: number; y: number };
  dpr?: number | string;
  pad?: true | number | { top?: number; right?: number; bottom?: number; left?: number };
  background?: string;
  grayscale?: boolean;
  brightness?: number | string;
  saturation?: number | string;
  hue?: number | string;
  blur?: number | string;
  sharpen?: true | number;
  radius?: number | string;
  overlay?: string;
  overlayGravity?: string;
  overlayOpacity?: number | string;
  overlayWidth?: number | string;
  overlayMargin?: number | string;
  format?: string;
  formats?: string[];
  quality?: number | string;
  maxBytes?: number | string;
  placeholder?: boolean;
  strip?: boolean;
}

export declare const URL_OPTIONS: readonly (readonly [
  option: keyof RegistryDeliveryOptions,
  name: string,
  kind: string,
  fields: readonly string[],
])[];
