// owns: the investigations, one question each, runnable with `npm run bench -- --only <name>` but never part of a
// default run or of --budget. They may reach inside the service (floor-layers.ts rebuilds it from http internals);
// the product sections in bench/ drive it only through HTTP and processImage.
import type { Section } from '../section.ts';
import { encodersSection } from './encoders.ts';
import { floorSection, layersReplaySection, layersSection } from './floor.ts';
import { inProcessBoundsSection } from './in-process-bounds.ts';
import { profileSection } from './profile.ts';
import { rawBodySection } from './raw-body.ts';
import { smallUrlSection } from './small-url.ts';

/** Every investigation by its --only name, in the order a run measures them. */
export const INVESTIGATIONS: Record<string, Section> = {
  encoders: encodersSection,
  rawbody: rawBodySection,
  'small-url': smallUrlSection,
  floor: floorSection,
  layers: layersSection,
  'layers-replay': layersReplaySection,
  profile: profileSection,
  'in-process-bounds': inProcessBoundsSection,
};
