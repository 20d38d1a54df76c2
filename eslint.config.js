// ESLint (flat config): a small rule set for what the compiler does not check — promises that are
// dropped or passed where nothing awaits them, awaits of non-promises, unused names, type-only
// imports, `any`, `==`, and `export *` (entry points are curated). Type-aware (the TypeScript
// project service, tsconfig.json) for every .ts file; scripts/*.mjs get the syntactic rules.
//   npm run lint        (eslint src test property-tests examples bench scripts)
import tseslint from 'typescript-eslint'

const common = {
  eqeqeq: ['error', 'always', { null: 'ignore' }],
  'no-restricted-syntax': [
    'error',
    {
      selector: 'ExportAllDeclaration',
      message: 'Entry points are curated: export each name explicitly, not `export *`.',
    },
  ],
}

export default tseslint.config(
  { ignores: ['dist/**', 'dist-bench/**', 'coverage/**', 'scratch/**', 'node_modules/**', 'test/types/docs/**'] },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      ...common,
      // A dropped promise loses its rejection (an unhandled rejection ends the process): await it,
      // or `void` it where the promise cannot reject or its failure is handled elsewhere.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function where a `void` callback or a condition is expected: its rejection is dropped.
      '@typescript-eslint/no-misused-promises': 'error',
      // `Promise.all(batch.map(check))` where `check` returns a value or a promise is the read
      // path's fast path (decoder in twain.ts): mixed arrays are allowed, all-plain arrays are not.
      '@typescript-eslint/await-thenable': ['error', { allowMixedPromiseArrays: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Warn, not error: the uses left in src/ are reviewed variance escapes (decision 93).
      '@typescript-eslint/no-explicit-any': 'warn',
    },
  },
  {
    // Compile-time type tests: values declared only for `typeof` checks (tsc checks them).
    files: ['test/types/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-vars': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    rules: { ...common, 'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }] },
  },
)
