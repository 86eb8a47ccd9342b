// The SDK's API types from its source (types only: nothing of the SDK is bundled into the console).
export type * from '../../sdk/src/types.ts';
