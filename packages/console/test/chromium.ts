/** Debian's Chromium (scripts/bootstrap.sh installs it), never a downloaded browser; flags keep it off the network. */
export const CHROMIUM = {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
};
