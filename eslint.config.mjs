// One lint standard for the whole tree: typescript-eslint's type-checked recommended rules
// (floating promises, unused code, `any` leaking into typed code), with formatting left to Prettier.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const untypedJson = {
  '@typescript-eslint/no-explicit-any': 'off',
  '@typescript-eslint/no-unsafe-argument': 'off',
  '@typescript-eslint/no-unsafe-assignment': 'off',
  '@typescript-eslint/no-unsafe-call': 'off',
  '@typescript-eslint/no-unsafe-member-access': 'off',
  '@typescript-eslint/no-unsafe-return': 'off',
};

export default tseslint.config(
  // postgres.js's files as upstream has them, and our tests of its patches written in its style.
  {
    ignores: [
      'dist/',
      'generated/',
      'node_modules/',
      'coverage/',
      '.data/',
      'patches/postgres/upstream/',
      'patches/postgres/fixes.test.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `_name`: deliberately unused (a destructured field left out, a parameter kept for its position).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Tests read response bodies (supertest types them `any`) and edit OpenAPI documents as plain
    // JSON; every response they read is checked against the spec at run time instead.
    files: ['test/**/*.ts'],
    rules: untypedJson,
  },
  {
    // The spec diff walks any two OpenAPI documents as JSON of unknown shape (`Json`).
    files: ['scripts/spec-diff/**/*.ts'],
    rules: untypedJson,
  },
  { files: ['**/*.mjs', '**/*.cjs'], ...tseslint.configs.disableTypeChecked },
  {
    // CommonJS, for what loads files without transforming them (a jest reporter).
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
