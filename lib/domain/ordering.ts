/**
 * Deterministic orders of the contract: ties on position (or created_at) are broken by
 * created_at, then id, so two reads never show a different order for the same data.
 */
type Positioned = { position: number; created_at: string; id: string };
type Created = { created_at: string; id: string };

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function byPosition(a: Positioned, b: Positioned): number {
  return a.position - b.position || byText(a.created_at, b.created_at) || byText(a.id, b.id);
}

/** Newest first, as GET /boards lists. */
export function byNewestFirst(a: Created, b: Created): number {
  return byText(b.created_at, a.created_at) || byText(a.id, b.id);
}

type Named = { name: string; id: string };

/** Labels by name, case-insensitively, then by id: the order of GET /boards/{id}/labels and of a card's label_ids. */
export function byLabelName(a: Named, b: Named): number {
  return byText(a.name.toLowerCase(), b.name.toLowerCase()) || byText(a.id, b.id);
}
