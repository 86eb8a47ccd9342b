/** A keyset position: list items strictly after it in (created_at desc, id desc) order. */
export interface Keyset {
  createdAt: number;
  id: string;
}
