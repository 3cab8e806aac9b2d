import type { BaseIssue } from 'valibot';

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
export function expectation(issue: BaseIssue<unknown>): string {
  if (issue.type === 'object' && issue.received === 'undefined') return 'is required';
  if (!issue.expected) return 'is invalid';
  if (issue.type === 'picklist') return `must be one of ${issue.expected?.replace(/^\(|\)$/g, '').replaceAll(' | ', ', ')}`;
  return `must be ${TYPE_NAMES[issue.expected ?? ''] ?? issue.expected}`;
}
