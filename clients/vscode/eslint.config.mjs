// Lint the extension, the webview and the tests with typescript-eslint's type-aware rules.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "dist-test/**", "bundled/**", "node_modules/**", "src/wire.ts", "**/*.mjs"] },
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-confusing-void-expression": "off",
    },
  },
  // node:test's test() returns a promise the runner awaits.
  { files: ["test/**"], rules: { "@typescript-eslint/no-floating-promises": "off" } },
);
