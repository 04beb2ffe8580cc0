/** The runtime's own `import()`, which tsc's CommonJS output would otherwise turn into `require()`. */
export declare function dynamicImport(specifier: string): Promise<Record<string, unknown>>;
