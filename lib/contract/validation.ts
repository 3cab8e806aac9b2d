import { type BaseIssue, type GenericSchema, safeParse } from 'valibot';

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  Object: 'an object',
  Array: 'an array',
};

/**
 * What a field must be, for the issues that carry no message of their own (type mismatches,
 * missing fields, unknown enum values). Valibot's defaults quote the value received, which an error
 * detail (problem+json or socket frame) has no business repeating (a password sent as a number, for one).
 */
function expectation(issue: BaseIssue<unknown>): string {
  if (issue.type === 'object' && issue.received === 'undefined') return 'is required';
  if (!issue.expected) return 'is invalid';
  if (issue.type === 'picklist') return `must be one of ${issue.expected?.replace(/^\(|\)$/g, '').replaceAll(' | ', ', ')}`;
  return `must be ${TYPE_NAMES[issue.expected ?? ''] ?? issue.expected}`;
}

/**
 * A value checked against a schema of the contract, every transport alike: the schema's output,
 * or each failed field as its dotted path (empty for the value itself) and what it must be.
 */
export function checkValue(
  schema: GenericSchema,
  value: unknown,
): { output: unknown } | { issues: { path: string; message: string }[] } {
  const result = safeParse(schema, value, { message: expectation });
  if (result.success) return { output: result.output };
  return {
    issues: result.issues.map((issue) => ({
      path: (issue.path ?? []).map((item) => String(item.key)).join('.'),
      message: issue.message,
    })),
  };
}
