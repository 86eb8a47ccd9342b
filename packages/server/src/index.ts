export { loadConfig, type Config } from './config.ts';
export { startPlatform, FIRST_KEY_FILE, type Platform, type StartOptions } from './server.ts';
export { openDb } from './store/db.ts';
export { TeamStore } from './store/teams.ts';
export { AuthService } from './services/auth.ts';
export { GateService } from './services/gates.ts';
export { TeamManagementStore } from './store/team-management.ts';
export { systemClock, ManualClock, type Clock } from './clock.ts';
export type { BuildProgress } from './templates/build-base.ts';
