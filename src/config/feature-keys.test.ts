/**
 * Features own their settings keys: the settings schema composes the fragments the cost and
 * telemetry features export, so a key's type, default and description live with the feature.
 */
import { describe, expect, it } from 'vitest';
import { costAutomationShape, costSettingsShape } from '../cost/schema.js';
import { telemetrySettingsShape } from '../telemetry/schema.js';
import { automationBaseShape } from '../triggers/common-schema.js';
import { SettingsTable } from './schema.js';

describe('settings keys owned by features', () => {
  it('[settings] takes the cost and telemetry keys from their features', () => {
    const shape = SettingsTable.shape as Record<string, unknown>;
    for (const [key, schema] of Object.entries({ ...costSettingsShape, ...telemetrySettingsShape }))
      expect(shape[key], key).toBe(schema);
  });

  it('every automation takes the cost keys from the cost feature', () => {
    const shape = automationBaseShape as Record<string, unknown>;
    for (const [key, schema] of Object.entries(costAutomationShape)) expect(shape[key], key).toBe(schema);
  });
});
