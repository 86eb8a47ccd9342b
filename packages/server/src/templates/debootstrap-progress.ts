/**
 * Turns debootstrap's human-readable output into package counts. Each package
 * is retrieved (or validated from the cache), unpacked and configured, so the
 * work is three steps per package. The number of packages is only known once
 * downloading ends; until then an estimate from a measured build is used.
 */
export const ESTIMATED_PACKAGES = 194;

export class DebootstrapProgress {
  private fetched = new Set<string>();
  private steps = 0;
  private downloading = true;

  /** Feeds one output line; returns true when it advanced the count. */
  feed(line: string): boolean {
    const m = line.match(/^I: (Retrieving|Validating|Extracting|Unpacking|Configuring) (\S+?)(?:\.\.\.| |$)/);
    if (!m) return false;
    const [, verb, name] = m as unknown as [string, string, string];
    if (name === 'InRelease' || name === 'Packages' || name === 'Release') return false;
    if (verb === 'Retrieving' || verb === 'Validating') {
      if (this.fetched.has(name)) return false;
      this.fetched.add(name);
      this.steps++;
      return true;
    }
    if (verb === 'Extracting') return false;
    // "Unpacking required packages..." and similar summaries name no package.
    if (/^(required|the|base)$/.test(name)) return false;
    this.downloading = false;
    this.steps++;
    return true;
  }

  get done(): number {
    return Math.min(this.steps, this.total);
  }

  get total(): number {
    const n = this.downloading ? Math.max(this.fetched.size, ESTIMATED_PACKAGES) : this.fetched.size;
    return Math.max(3 * n, this.steps);
  }
}
