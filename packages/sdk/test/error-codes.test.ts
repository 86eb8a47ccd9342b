import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ERROR_CODES, genericCode } from '../../server/src/error-codes.ts';
import { apiError, FALLBACK_CODES } from '../src/errors.ts';

test("the SDK's generic code per status is the server registry's", () => {
  const statuses = [...new Set(Object.values(ERROR_CODES))].sort();
  assert.deepEqual(Object.keys(FALLBACK_CODES).map(Number).sort(), statuses);
  for (const status of statuses) assert.equal(FALLBACK_CODES[status], genericCode(status), `status ${status}`);
  assert.equal(apiError(404, undefined, 'proxy page').code, 'not_found');
  assert.equal(apiError(429, 'too_many_sandboxes', 'cap').code, 'too_many_sandboxes');
});
