import { readFileSync } from 'node:fs';
import type { Resource, TemplateJson } from './template-tree';

/**
 * What a deployed stack sees on its next `cdk deploy`, from two synthesized root templates (the
 * deployed one, the new one), without AWS: `cdk diff` needs the account. Per root resource:
 * added, removed (CloudFormation deletes it in the cleanup phase, after the new ones exist),
 * modified (which properties) or kept. Nested stacks' resources are all new on the first deploy.
 *
 *   node --import tsx infra/upgrade-diff.ts <old root template> <new root template>
 */
export interface UpgradeDiff {
  added: Record<string, string>;
  removed: Record<string, string>;
  modified: Record<string, { type: string; properties: string[] }>;
  kept: Record<string, string>;
}

/** Properties that carry nothing CloudFormation acts on, left out of the comparison. */
const sameBut = (resource: Resource) => {
  const { Metadata: _, ...rest } = resource;
  return rest;
};

export function upgradeDiff(before: TemplateJson, after: TemplateJson): UpgradeDiff {
  const diff: UpgradeDiff = { added: {}, removed: {}, modified: {}, kept: {} };
  const old = before.Resources ?? {};
  const now = after.Resources ?? {};
  for (const [id, resource] of Object.entries(now)) {
    const previous = old[id];
    if (!previous) diff.added[id] = resource.Type;
    else if (previous.Type !== resource.Type) throw new Error(`${id} changed type: ${previous.Type} → ${resource.Type}`);
    else if (JSON.stringify(sameBut(previous)) === JSON.stringify(sameBut(resource))) diff.kept[id] = resource.Type;
    else {
      const keys = new Set([...Object.keys(previous.Properties ?? {}), ...Object.keys(resource.Properties ?? {})]);
      const properties = [...keys].filter(
        (key) => JSON.stringify(previous.Properties?.[key]) !== JSON.stringify(resource.Properties?.[key]),
      );
      for (const attribute of ['DependsOn', 'DeletionPolicy', 'UpdateReplacePolicy', 'Condition'] as const) {
        if (JSON.stringify(previous[attribute]) !== JSON.stringify(resource[attribute])) properties.push(attribute);
      }
      diff.modified[id] = { type: resource.Type, properties };
    }
  }
  for (const [id, resource] of Object.entries(old)) if (!(id in now)) diff.removed[id] = resource.Type;
  return diff;
}

/** Counts by type, for a summary: `{ "AWS::Lambda::Function": 43, ... }`. */
export const countByType = (resources: Record<string, string | { type: string }>) => {
  const counts: Record<string, number> = {};
  for (const value of Object.values(resources)) {
    const type = typeof value === 'string' ? value : value.type;
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([, a], [, b]) => b - a));
};

if (process.argv[1]?.endsWith('upgrade-diff.ts')) {
  const [beforePath, afterPath] = process.argv.slice(2);
  if (!beforePath || !afterPath) throw new Error('usage: upgrade-diff.ts <old root template> <new root template>');
  const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as TemplateJson;
  const diff = upgradeDiff(read(beforePath), read(afterPath));
  const modifiedProperties: Record<string, Record<string, number>> = {};
  for (const { type, properties } of Object.values(diff.modified)) {
    const key = `${type} (${properties.join(', ')})`;
    modifiedProperties[key] ??= {};
    modifiedProperties[key].count = (modifiedProperties[key].count ?? 0) + 1;
  }
  console.log(
    JSON.stringify(
      {
        added: countByType(diff.added),
        removed: countByType(diff.removed),
        modified: Object.fromEntries(Object.entries(modifiedProperties).map(([key, { count }]) => [key, count])),
        kept: countByType(diff.kept),
      },
      null,
      2,
    ),
  );
}
