/**
 * zod/mini (the tree-shakable zod 4 API, ~10 times smaller in a bundle than classic zod) ships no
 * error messages by default; these are classic zod's English ones, so validation problems read as
 * they always did ("Invalid input: expected string, received number").
 */

import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

let configured = false;

/** Installs the English messages (once; classic zod does the same when it is imported). */
export function zodMessages(): void {
  if (configured) return;
  configured = true;
  config(en());
}
