/** Who is calling: always derived from the API key, never from a header the client chooses. */
export interface Principal {
  teamId: string;
  userId: string;
  keyId: string;
  permissions: readonly string[];
}
