// owns: the item structure of a HEIF file (HEIC, AVIF) read from its boxes before any decoder runs: the primary
// image, its coding, size, grid tiles, transforms, alpha, colour profile and metadata items. A pure, linear walk.

/** Why a HEIF file's structure cannot be used: truncated, malformed, or a construction this server does not decode. */
export class HeifStructureError extends Error {}

/** How the primary image's pixels are coded: HEVC (HEIC), AV1 (AVIF), or anything else (JPEG items, overlays…). */
export type HeifCodec = 'hevc' | 'av1' | 'other';

/**
 * A transform of the pixels as HEIF writes it: `irot` (anticlockwise quarter turns) or `imir`. imir's field was
 * named `axis` in HEIF's first edition, read both ways; the 2022 edition calls it `mode` and settles it as libheif,
 * libavif and browsers read it: 0 swaps top and bottom, 1 left and right.
 */
export type HeifTransform = { rotate: 90 | 180 | 270 } | { mirror: 'top-bottom' | 'left-right' };

export interface HeifStructure {
  /** The major brand followed by the compatible ones. */
  brands: string[];
  /** The primary item's type: `hvc1`, `av01`, `grid`, … */
  primaryType: string;
  codec: HeifCodec;
  /** The size of the primary image as stored (its `ispe`, a grid's output size; `clap` applied), before transforms. */
  width: number;
  height: number;
  /** Coded images the primary is decoded from: 1, or a grid's tiles (their rows × columns). */
  tiles: number;
  /** Pixels of those coded images together: a grid's tiles may reach past the image they make. */
  codedPixels: number;
  /** The primary's transforms in the order they apply (HEIF's are authoritative, the EXIF orientation is not). */
  transforms: HeifTransform[];
  /** The EXIF orientation (1–8) that turns the stored pixels as the transforms do. */
  orientation: number;
  /** Top-level images: neither hidden, nor a tile, thumbnail or auxiliary image (a burst holds several). */
  images: number;
  hasAlpha: boolean;
  /** The primary's ICC profile (`colr` of type `prof` or `rICC`), or that of its first tile. */
  icc?: Buffer;
  /** The EXIF item describing the primary, from its TIFF header on (the 4-byte offset and any "Exif\0\0" skipped). */
  exif?: Buffer;
  /** The XMP item (`mime`, application/rdf+xml) describing the primary. */
  xmp?: Buffer;
}

/** Brands of the HEIF family: a file whose `ftyp` names one of them is read with readHeifStructure. */
export const HEIF_BRANDS: ReadonlySet<string> = new Set([
  'heic',
  'heix',
  'hevc',
  'hevx',
  'heim',
  'heis',
  'avif',
  'avis',
  'mif1',
  'msf1',
  'miaf',
]);

/** Item types that are images (the rest are metadata: Exif, mime, uri…). */
const IMAGE_TYPES = new Set(['hvc1', 'av01', 'grid', 'iden', 'iovl', 'jpeg', 'unci', 'j2k1', 'vvc1', 'avc1']);
const ALPHA_TYPES = new Set(['urn:mpeg:hevc:2015:auxid:1', 'urn:mpeg:mpegB:cicp:systems:auxiliary:alpha']);

interface Box {
  type: string;
  /** Where its content starts (after the header) and ends. */
  start: number;
  end: number;
}

interface Extent {
  offset: number;
  length: number;
}

interface Item {
  id: number;
  type: string;
  hidden: boolean;
  contentType?: string;
  construction: number;
  extents: Extent[];
  /** Indexes (1-based) into ipco, in association order. */
  properties: number[];
}

const truncated = () => new HeifStructureError('the file is truncated (a box reaches past its end)');

/**
 * The boxes between `start` and `end`, each checked to lie inside them; with `clipLast`, the last may be cut short (a
 * file's `mdat`: what the items need of it is checked extent by extent).
 */
function boxes(buf: Buffer, start: number, end: number, clipLast = false): Box[] {
  const found: Box[] = [];
  let at = start;
  while (at < end) {
    if (at + 8 > end) throw truncated();
    let size = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      if (at + 16 > end) throw truncated();
      const large = buf.readBigUInt64BE(at + 8);
      size = large > BigInt(end - at) ? Infinity : Number(large);
      header = 16;
    } else if (size === 0) {
      size = end - at;
    }
    if (size < header) throw new HeifStructureError(`the box ${JSON.stringify(type)} has an impossible size`);
    if (at + size > end) {
      if (!clipLast || type !== 'mdat') throw truncated();
      size = end - at;
    }
    found.push({ type, start: at + header, end: at + size });
    at += size;
  }
  return found;
}

const child = (all: Box[], type: string) => all.find((b) => b.type === type);

/** A cursor over one box's content: every read checks the box's end. */
class Reader {
  constructor(
    private readonly buf: Buffer,
    public at: number,
    private readonly end: number,
  ) {}

  private need(bytes: number) {
    if (this.at + bytes > this.end) throw new HeifStructureError('a box is shorter than its fields');
  }
  u8() {
    this.need(1);
    return this.buf[this.at++]!;
  }
  u16() {
    this.need(2);
    const v = this.buf.readUInt16BE(this.at);
    this.at += 2;
    return v;
  }
  u32() {
    this.need(4);
    const v = this.buf.readUInt32BE(this.at);
    this.at += 4;
    return v;
  }
  /** An unsigned integer of 0, 4 or 8 bytes (iloc's field sizes). */
  sized(bytes: number) {
    if (bytes === 0) return 0;
    if (bytes === 4) return this.u32();
    if (bytes === 8) {
      this.need(8);
      const v = this.buf.readBigUInt64BE(this.at);
      this.at += 8;
      if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new HeifStructureError('an offset is out of range');
      return Number(v);
    }
    throw new HeifStructureError(`iloc uses a field size of ${bytes} bytes`);
  }
  fourcc() {
    this.need(4);
    const v = this.buf.toString('latin1', this.at, this.at + 4);
    this.at += 4;
    return v;
  }
  /** A null-terminated string (the end of the box ends an unterminated one). */
  string() {
    // Searched inside the box only: a search to the file's end for every string would make the walk quadratic.
    const nul = this.buf.subarray(this.at, this.end).indexOf(0);
    const stop = nul < 0 ? this.end : this.at + nul;
    const v = this.buf.toString('utf8', this.at, stop);
    this.at = Math.min(this.end, stop + 1);
    return v;
  }
  fullBox() {
    const version = this.u8();
    const flags = (this.u8() << 16) | this.u16();
    return { version, flags };
  }
}

/** Most compatible brands read: files name a handful; an `ftyp` the size of the file is not read as thousands. */
const MAX_BRANDS = 64;

function readBrands(buf: Buffer, ftyp: Box): string[] {
  const brands = [buf.toString('latin1', ftyp.start, ftyp.start + 4)];
  const end = Math.min(ftyp.end, ftyp.start + 8 + 4 * MAX_BRANDS);
  for (let at = ftyp.start + 8; at + 4 <= end; at += 4) brands.push(buf.toString('latin1', at, at + 4));
  return brands;
}

function readItems(buf: Buffer, iinf: Box): Map<number, Item> {
  const r = new Reader(buf, iinf.start, iinf.end);
  const { version } = r.fullBox();
  if (version === 0) r.u16();
  else r.u32();
  const items = new Map<number, Item>();
  for (const infe of boxes(buf, r.at, iinf.end)) {
    if (infe.type !== 'infe') continue;
    const e = new Reader(buf, infe.start, infe.end);
    const { version: v, flags } = e.fullBox();
    // Versions 0 and 1 predate item types: no image is written so.
    if (v < 2) continue;
    const id = v === 2 ? e.u16() : e.u32();
    e.u16();
    const type = e.fourcc();
    e.string();
    const item: Item = { id, type, hidden: (flags & 1) !== 0, construction: 0, extents: [], properties: [] };
    if (type === 'mime') item.contentType = e.string();
    items.set(id, item);
  }
  return items;
}

function readLocations(buf: Buffer, iloc: Box, items: Map<number, Item>): void {
  const r = new Reader(buf, iloc.start, iloc.end);
  const { version } = r.fullBox();
  if (version > 2) throw new HeifStructureError(`iloc version ${version} is unknown`);
  const sizes = r.u8();
  const bases = r.u8();
  const offsetSize = sizes >> 4;
  const lengthSize = sizes & 15;
  const baseSize = bases >> 4;
  const indexSize = version === 0 ? 0 : bases & 15;
  const count = version < 2 ? r.u16() : r.u32();
  for (let i = 0; i < count; i++) {
    const id = version < 2 ? r.u16() : r.u32();
    const construction = version === 0 ? 0 : r.u16() & 15;
    r.u16();
    const base = r.sized(baseSize);
    const extents: Extent[] = [];
    for (let n = r.u16(); n > 0; n--) {
      r.sized(indexSize);
      const offset = base + r.sized(offsetSize);
      extents.push({ offset, length: r.sized(lengthSize) });
    }
    const item = items.get(id);
    if (item) Object.assign(item, { construction, extents });
  }
}

/** References of each type: from an item to the items it names (iref), in order. */
type References = Map<string, { from: number; to: number[] }[]>;

function readReferences(buf: Buffer, iref: Box | undefined): References {
  const refs: References = new Map();
  if (!iref) return refs;
  const r = new Reader(buf, iref.start, iref.end);
  const { version } = r.fullBox();
  for (const box of boxes(buf, r.at, iref.end)) {
    const e = new Reader(buf, box.start, box.end);
    const id = () => (version === 0 ? e.u16() : e.u32());
    const from = id();
    const to: number[] = [];
    for (let n = e.u16(); n > 0; n--) to.push(id());
    const ofType = refs.get(box.type);
    if (ofType) ofType.push({ from, to });
    else refs.set(box.type, [{ from, to }]);
  }
  return refs;
}

function readAssociations(buf: Buffer, iprp: Box, items: Map<number, Item>): Box[] {
  const inside = boxes(buf, iprp.start, iprp.end);
  const ipco = child(inside, 'ipco');
  if (!ipco) throw new HeifStructureError('there is no item property box (ipco)');
  const properties = boxes(buf, ipco.start, ipco.end);
  for (const ipma of inside.filter((b) => b.type === 'ipma')) {
    const r = new Reader(buf, ipma.start, ipma.end);
    const { version, flags } = r.fullBox();
    for (let n = r.u32(); n > 0; n--) {
      const id = version < 1 ? r.u16() : r.u32();
      const associated: number[] = [];
      for (let k = r.u8(); k > 0; k--) associated.push(flags & 1 ? r.u16() & 0x7fff : r.u8() & 0x7f);
      items.get(id)?.properties.push(...associated);
    }
  }
  return properties;
}

/**
 * The bytes of an item (its extents joined), each extent checked to lie in the file or in `idat`, and together no
 * more than the file: extents naming the same bytes again and again would make a copy of any size.
 */
function itemData(buf: Buffer, item: Item, idat: Box | undefined): Buffer {
  const extents = itemExtents(buf, item, idat);
  if (extents.reduce((sum, { length }) => sum + length, 0) > buf.length) {
    throw new HeifStructureError(`the data of item ${item.id} adds up to more than the file`);
  }
  return Buffer.concat(extents.map(({ offset, length }) => buf.subarray(offset, offset + length)));
}

function itemExtents(buf: Buffer, item: Item, idat: Box | undefined): Extent[] {
  if (item.construction > 1) {
    throw new HeifStructureError(`item ${item.id} is built by construction method ${item.construction}`);
  }
  const [origin, end] = item.construction === 1 ? (idat ? [idat.start, idat.end] : [0, -1]) : [0, buf.length];
  if (end < 0) throw new HeifStructureError(`item ${item.id} lies in an idat box the file lacks`);
  return item.extents.map(({ offset, length }) => {
    const start = origin + offset;
    // A length of 0 is "to the end of the data".
    const stop = length === 0 ? end : start + length;
    if (stop > end) throw truncated();
    return { offset: start, length: stop - start };
  });
}

interface Parts {
  buf: Buffer;
  items: Map<number, Item>;
  properties: Box[];
  refs: References;
  idat: Box | undefined;
}

function propertiesOf(parts: Parts, item: Item): Box[] {
  return item.properties.flatMap((index) => {
    const box = parts.properties[index - 1];
    if (index !== 0 && box === undefined) {
      throw new HeifStructureError(`item ${item.id} names property ${index}, which does not exist`);
    }
    return box ? [box] : [];
  });
}

function ispe(parts: Parts, item: Item): { width: number; height: number } {
  const box = propertiesOf(parts, item).find((b) => b.type === 'ispe');
  if (!box) throw new HeifStructureError(`image item ${item.id} has no size (ispe)`);
  const r = new Reader(parts.buf, box.start, box.end);
  r.fullBox();
  return { width: r.u32(), height: r.u32() };
}

/** `clap`'s clean aperture, rounded as libheif does, inside the stored size. */
function cleanAperture(parts: Parts, item: Item, size: { width: number; height: number }) {
  const box = propertiesOf(parts, item).find((b) => b.type === 'clap');
  if (!box) return size;
  const r = new Reader(parts.buf, box.start, box.end);
  const fraction = () => {
    const n = r.u32();
    const d = r.u32();
    return d === 0 ? 0 : n / d;
  };
  const width = Math.round(fraction());
  const height = Math.round(fraction());
  return { width: Math.min(width, size.width), height: Math.min(height, size.height) };
}

function transformsOf(parts: Parts, item: Item): HeifTransform[] {
  return propertiesOf(parts, item).flatMap((box): HeifTransform[] => {
    if (box.type !== 'irot' && box.type !== 'imir') return [];
    const value = new Reader(parts.buf, box.start, box.end).u8();
    if (box.type === 'imir') return [{ mirror: value & 1 ? 'left-right' : 'top-bottom' }];
    const quarter = value & 3;
    return quarter === 0 ? [] : [{ rotate: (quarter * 90) as 90 | 180 | 270 }];
  });
}

function iccOf(parts: Parts, item: Item): Buffer | undefined {
  for (const box of propertiesOf(parts, item)) {
    if (box.type !== 'colr' || box.end - box.start < 4) continue;
    const kind = parts.buf.toString('latin1', box.start, box.start + 4);
    if (kind === 'prof' || kind === 'rICC') return parts.buf.subarray(box.start + 4, box.end);
  }
  return undefined;
}

function auxType(parts: Parts, item: Item): string | undefined {
  const box = propertiesOf(parts, item).find((b) => b.type === 'auxC');
  if (!box) return undefined;
  const r = new Reader(parts.buf, box.start, box.end);
  r.fullBox();
  return r.string();
}

/** Targets of `type` references from `from`, and sources of `type` references to `to`. */
function referenced(refs: References, type: string, from: number): number[] {
  return (refs.get(type) ?? []).filter((ref) => ref.from === from).flatMap((ref) => ref.to);
}
function referencing(refs: References, type: string, to: number): number[] {
  return (refs.get(type) ?? []).filter((ref) => ref.to.includes(to)).map((ref) => ref.from);
}

/**
 * The EXIF orientation equal to `transforms` applied in order, found by where they send two unit vectors (x to the
 * right, y down): each orientation is one of the eight symmetries of a rectangle.
 */
export function orientationOf(transforms: readonly HeifTransform[]): number {
  type V = [number, number];
  const apply = ([x, y]: V, t: HeifTransform): V => {
    if ('mirror' in t) return t.mirror === 'left-right' ? [-x, y] : [x, -y];
    // Anticlockwise on screen (y down): a quarter turn sends (x, y) to (y, −x).
    let v: V = [x, y];
    for (let q = t.rotate / 90; q > 0; q--) v = [v[1], -v[0]];
    return v;
  };
  const image = (v: V) => transforms.reduce(apply, v);
  const [ex, ey] = [image([1, 0]), image([0, 1])];
  // EXIF orientation n: where it sends (1, 0) and (0, 1), turning the stored image upright.
  const EXIF: Record<number, [V, V]> = {
    1: [
      [1, 0],
      [0, 1],
    ],
    2: [
      [-1, 0],
      [0, 1],
    ],
    3: [
      [-1, 0],
      [0, -1],
    ],
    4: [
      [1, 0],
      [0, -1],
    ],
    5: [
      [0, 1],
      [1, 0],
    ],
    6: [
      [0, 1],
      [-1, 0],
    ],
    7: [
      [0, -1],
      [-1, 0],
    ],
    8: [
      [0, -1],
      [1, 0],
    ],
  };
  const same = (a: V, b: V) => a[0] === b[0] && a[1] === b[1];
  return Number(Object.entries(EXIF).find(([, [x, y]]) => same(x, ex) && same(y, ey))![0]);
}

/** The coding of an image item: its own, or for a grid that of its tiles (all of them). */
function codecOf(parts: Parts, item: Item): HeifCodec {
  const coded = (type: string): HeifCodec => (type === 'hvc1' ? 'hevc' : type === 'av01' ? 'av1' : 'other');
  if (item.type !== 'grid') return coded(item.type);
  const types = new Set(referenced(parts.refs, 'dimg', item.id).map((id) => parts.items.get(id)?.type ?? ''));
  return types.size === 1 ? coded([...types][0]!) : 'other';
}

interface GridLayout {
  rows: number;
  columns: number;
  width: number;
  height: number;
}

function gridLayout(parts: Parts, grid: Item): GridLayout {
  const data = itemData(parts.buf, grid, parts.idat);
  const r = new Reader(data, 0, data.length);
  r.u8();
  const flags = r.u8();
  const rows = r.u8() + 1;
  const columns = r.u8() + 1;
  const [width, height] = flags & 1 ? [r.u32(), r.u32()] : [r.u16(), r.u16()];
  return { rows, columns, width, height };
}

/** Metadata items (`cdsc` references) describing the primary: its first EXIF and its first XMP. */
function metadataOf(parts: Parts, primary: Item): Pick<HeifStructure, 'exif' | 'xmp'> {
  const found: Pick<HeifStructure, 'exif' | 'xmp'> = {};
  for (const id of referencing(parts.refs, 'cdsc', primary.id)) {
    const item = parts.items.get(id);
    if (!item) continue;
    if (item.type === 'Exif' && !found.exif) {
      const data = itemData(parts.buf, item, parts.idat);
      if (data.length < 4) continue;
      const tiff = 4 + data.readUInt32BE(0);
      if (tiff + 8 <= data.length) found.exif = data.subarray(tiff);
    } else if (item.type === 'mime' && item.contentType === 'application/rdf+xml' && !found.xmp) {
      found.xmp = itemData(parts.buf, item, parts.idat);
    }
  }
  return found;
}

/** The brands of a file that starts with an `ftyp` box (as far as the file holds them), or undefined. */
export function heifBrands(buf: Buffer): string[] | undefined {
  if (buf.length < 12 || buf.toString('latin1', 4, 8) !== 'ftyp') return undefined;
  return readBrands(buf, { type: 'ftyp', start: 8, end: Math.min(buf.readUInt32BE(0), buf.length) });
}

/**
 * Reads a HEIF file's item structure: `ftyp`, then the `meta` box (items, their locations, references and
 * properties), never the coded data, whose extents are only checked to lie inside the file. Throws
 * HeifStructureError for a truncated or malformed file, one without a primary image, or a primary built in a way
 * this reader does not follow. A burst or an image sequence is read for its primary image (the still in `meta`).
 */
export function readHeifStructure(buf: Buffer): HeifStructure {
  const top = boxes(buf, 0, buf.length, true);
  const ftyp = top[0]?.type === 'ftyp' ? top[0] : undefined;
  if (!ftyp) throw new HeifStructureError('the file does not start with a file type box (ftyp)');
  const brands = readBrands(buf, ftyp);
  const meta = child(top, 'meta');
  if (!meta) throw new HeifStructureError('there is no meta box: no still image (an image sequence alone?)');
  const inside = boxes(buf, meta.start + 4, meta.end);
  const need = (type: string) => {
    const box = child(inside, type);
    if (!box) throw new HeifStructureError(`the meta box has no ${type} box`);
    return box;
  };
  const hdlr = need('hdlr');
  if (buf.toString('latin1', hdlr.start + 8, hdlr.start + 12) !== 'pict') {
    throw new HeifStructureError('the meta box does not describe pictures (hdlr)');
  }
  const items = readItems(buf, need('iinf'));
  readLocations(buf, need('iloc'), items);
  const parts: Parts = {
    buf,
    items,
    properties: readAssociations(buf, need('iprp'), items),
    refs: readReferences(buf, child(inside, 'iref')),
    idat: child(inside, 'idat'),
  };
  const pitm = new Reader(buf, need('pitm').start, need('pitm').end);
  const primaryId = pitm.fullBox().version === 0 ? pitm.u16() : pitm.u32();
  const primary = items.get(primaryId);
  if (!primary || !IMAGE_TYPES.has(primary.type)) {
    throw new HeifStructureError(`the primary item ${primaryId} is not an image`);
  }

  const codec = codecOf(parts, primary);
  let stored: { width: number; height: number };
  let tiles = 1;
  let codedPixels: number;
  let profileItem = primary;
  if (primary.type === 'grid') {
    const grid = gridLayout(parts, primary);
    const tileIds = referenced(parts.refs, 'dimg', primary.id);
    tiles = tileIds.length;
    // Checked before anything per tile: a grid may name thousands (the same tile again and again).
    if (tiles !== grid.rows * grid.columns) {
      throw new HeifStructureError(
        `the grid is ${grid.rows}×${grid.columns} tiles but names ${tiles} (dimg references)`,
      );
    }
    const first = items.get(tileIds[0]!);
    if (!first) throw new HeifStructureError(`the grid names item ${tileIds[0]}, which does not exist`);
    const tile = ispe(parts, first);
    if (tile.width * grid.columns < grid.width || tile.height * grid.rows < grid.height) {
      throw new HeifStructureError('the grid tiles do not cover the image');
    }
    stored = { width: grid.width, height: grid.height };
    codedPixels = tiles * tile.width * tile.height;
    profileItem = iccOf(parts, primary) ? primary : first;
  } else {
    stored = cleanAperture(parts, primary, ispe(parts, primary));
    codedPixels = stored.width * stored.height;
  }
  // The coded data of the primary (or its tiles) must be in the file: a cut file is refused before decoding.
  for (const id of primary.type === 'grid'
    ? new Set(referenced(parts.refs, 'dimg', primary.id))
    : [primary.id]) {
    const item = items.get(id);
    if (!item) throw new HeifStructureError(`the grid names item ${id}, which does not exist`);
    if (item.type === 'hvc1' && !propertiesOf(parts, item).some((b) => b.type === 'hvcC')) {
      throw new HeifStructureError(`HEVC item ${id} has no decoder configuration (hvcC)`);
    }
    if (itemExtents(buf, item, parts.idat).length === 0) {
      throw new HeifStructureError(`image item ${id} has no data`);
    }
  }

  const notTopLevel = new Set<number>();
  for (const type of ['dimg', 'thmb', 'auxl', 'base']) {
    for (const ref of parts.refs.get(type) ?? []) {
      if (type === 'dimg') ref.to.forEach((id) => notTopLevel.add(id));
      else notTopLevel.add(ref.from);
    }
  }
  const images = [...items.values()].filter(
    (item) => IMAGE_TYPES.has(item.type) && !item.hidden && !notTopLevel.has(item.id),
  ).length;
  const hasAlpha = referencing(parts.refs, 'auxl', primary.id).some((id) => {
    const item = items.get(id);
    return item !== undefined && ALPHA_TYPES.has(auxType(parts, item) ?? '');
  });
  const transforms = transformsOf(parts, primary);
  const icc = iccOf(parts, profileItem);
  return {
    brands,
    primaryType: primary.type,
    codec,
    ...stored,
    tiles,
    codedPixels,
    transforms,
    orientation: orientationOf(transforms),
    images: Math.max(1, images),
    hasAlpha,
    ...(icc && { icc }),
    ...metadataOf(parts, primary),
  };
}
