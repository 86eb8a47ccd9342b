import { join } from 'node:path';

/** Where the container driver keeps each piece of state under its data directory. */
export interface DriverPaths {
  crunRoot: string;
  sandboxesDir: string;
  layerImage: string;
  layersDir: string;
}

export function driverPaths(dataDir: string): DriverPaths {
  return {
    crunRoot: join(dataDir, 'crun'),
    sandboxesDir: join(dataDir, 'sandboxes'),
    layerImage: join(dataDir, 'layers.img'),
    layersDir: join(dataDir, 'layers'),
  };
}

export interface SandboxPaths {
  dir: string;
  bundle: string;
  config: string;
  meta: string;
  rootfs: string;
  runDir: string;
  socket: string;
  pidFile: string;
  log: string;
  /** Present while it is paused keeping only its disk: no process runs, resume runs it again. */
  stopped: string;
}

export function sandboxPaths(paths: DriverPaths, id: string): SandboxPaths {
  const dir = join(paths.sandboxesDir, id);
  return {
    dir,
    bundle: dir,
    config: join(dir, 'config.json'),
    meta: join(dir, 'sandbox.json'),
    rootfs: join(dir, 'rootfs'),
    runDir: join(dir, 'run'),
    socket: join(dir, 'run', 'agent.sock'),
    pidFile: join(dir, 'init.pid'),
    log: join(dir, 'agent.log'),
    stopped: join(dir, 'stopped'),
  };
}
