/**
 * A bounded map of values kept to save work (decoded records, parsed rows),
 * by a string key, each with a weight (bytes, or one each). When an addition
 * would pass the bound, values kept go at random until it fits. Not the least
 * recently used: readers that go round a set larger than the bound (agents
 * polling their tasks in turn, a merge of every task in turn) would find
 * every value just gone, where random eviction keeps about the share of the
 * set that fits; and a hit costs one lookup, with no reordering.
 *
 * @module
 */
export class KeptValues<V> {
  private readonly entries = new Map<string, { value: V; weight: number; at: number }>();
  /** The keys kept, in no order: a random one goes when the bound is reached. */
  private readonly ids: string[] = [];
  private weight = 0;

  /** `capacity`: the most weight kept at once. */
  constructor(private readonly capacity: number) {}

  /** How many values are kept. */
  get count(): number {
    return this.ids.length;
  }

  get(id: string): V | undefined {
    return this.entries.get(id)?.value;
  }

  /** Keeps `value` under `id` (replacing one kept there), unless its weight alone passes the bound. */
  set(id: string, value: V, weight = 1): void {
    if (this.entries.has(id)) this.delete(id);
    if (weight > this.capacity) return;
    while (this.ids.length > 0 && this.weight + weight > this.capacity) this.delete(this.ids[Math.floor(Math.random() * this.ids.length)]!);
    this.entries.set(id, { value, weight, at: this.ids.length });
    this.ids.push(id);
    this.weight += weight;
  }

  delete(id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.entries.delete(id);
    this.weight -= entry.weight;
    // The last key takes the deleted one's place.
    const last = this.ids.pop()!;
    if (last !== id) {
      this.ids[entry.at] = last;
      this.entries.get(last)!.at = entry.at;
    }
  }
}
