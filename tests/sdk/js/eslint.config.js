// The JavaScript that `sbp code --lang js` writes is eslint clean with eslint's recommended rules,
// as a CommonJS program for Node (tests/sdk/presets.sh lints every preset's program in .types/).
import js from "@eslint/js";
import globals from "globals";

export default [
  {
    files: [".types/**/*.js"],
    rules: js.configs.recommended.rules,
    languageOptions: { sourceType: "commonjs", globals: globals.node },
  },
];
