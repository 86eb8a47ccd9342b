// The SDK from source: in the repository nothing waits for a build, and the CLI's own build bundles it.
export * from '../../sdk/src/index.ts';
