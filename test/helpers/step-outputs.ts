import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const manifestPath = fileURLToPath(new URL('../../manifest.yml', import.meta.url));

interface Parameter {
  type: string;
  is_required?: boolean;
}

interface StepDefinition {
  input_parameters: Record<string, Parameter>;
  output_parameters: Record<string, Parameter>;
}

/** The manifest's definition of one of the app's Workflow Builder steps. */
export function stepDefinition(callbackId: string): StepDefinition {
  const manifest = parse(readFileSync(manifestPath, 'utf8')) as {
    functions?: Record<string, StepDefinition>;
  };
  const step = manifest.functions?.[callbackId];
  if (!step) throw new Error(`manifest.yml has no function ${callbackId}`);
  return step;
}

/** Whether a value is one Slack accepts for a parameter of the given type. */
function fits(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'slack#/types/channel_id':
      return typeof value === 'string' && /^[CGD][A-Z0-9]+$/.test(value);
    case 'slack#/types/user_id':
      return typeof value === 'string' && /^[UW][A-Z0-9]+$/.test(value);
    case 'slack#/types/message_ts':
      return typeof value === 'string' && /^\d+\.\d+$/.test(value);
    default:
      return false;
  }
}

/**
 * What is wrong with a step's outputs against its manifest `output_parameters`: a required one
 * missing, one not declared, or a value not of its declared type. Empty when they match.
 */
export function outputProblems(callbackId: string, outputs: Record<string, unknown>): string[] {
  const declared = stepDefinition(callbackId).output_parameters;
  const problems: string[] = [];
  for (const [name, parameter] of Object.entries(declared)) {
    if (!(name in outputs)) {
      if (parameter.is_required) problems.push(`${name}: required, missing`);
      continue;
    }
    if (!fits(parameter.type, outputs[name])) problems.push(`${name}: not a ${parameter.type}`);
  }
  for (const name of Object.keys(outputs))
    if (!(name in declared)) problems.push(`${name}: not declared in the manifest`);
  return problems;
}
