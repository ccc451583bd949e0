// t:<name> in delivery URLs: read as operations' "preset", resolved into the preset's operations before validation,
// so the derivative's key is what the preset says (a changed preset is a new key; the same output is one key).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.ts';
import { deliveryPresetName, parseDeliveryRequest } from '../../src/delivery/url.ts';
import { operationsSchema } from '../../src/pipeline/operations.ts';

const schema = operationsSchema(10_000);
const SOURCE = encodeURIComponent('https://images.example.com/a.jpg');

/** A resolver as src/presets/ builds one, for a preset `card` of these operations. */
const card =
  (operations: Record<string, unknown>) =>
  (value: unknown): unknown => {
    const { preset, ...beside } = value as Record<string, unknown>;
    return preset === undefined ? value : { ...operations, ...beside };
  };

test('delivery url: t:<name> names the preset; its operations apply first and the other options replace its keys', () => {
  assert.equal(deliveryPresetName(`w:300/t:card/${SOURCE}`), 'card');
  assert.equal(deliveryPresetName(`w:300/${SOURCE}`), undefined);
  const parsed = parseDeliveryRequest(
    `t:card/q:60/${SOURCE}`,
    schema,
    card({ resize: { w: 300 }, quality: 90 }),
  );
  assert.deepEqual(parsed.operations, { resize: { w: 300 }, quality: 60 });
});

test('delivery url: the key of a t: URL is what its preset resolves to, so a changed preset is a new key', () => {
  const viaPreset = parseDeliveryRequest(`t:card/${SOURCE}`, schema, card({ resize: { w: 300 } }));
  const spelled = parseDeliveryRequest(`w:300/${SOURCE}`, schema);
  const changed = parseDeliveryRequest(`t:card/${SOURCE}`, schema, card({ resize: { w: 200 } }));
  assert.equal(viaPreset.normalisedOptions, spelled.normalisedOptions);
  assert.notEqual(changed.normalisedOptions, viaPreset.normalisedOptions);
});

test('delivery url: t: left unresolved is 400 invalid_operations', () => {
  assert.throws(
    () => parseDeliveryRequest(`t:card/${SOURCE}`, schema),
    (err) => err instanceof ApiError && err.code === 'invalid_operations',
  );
});
