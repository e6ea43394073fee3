/** Entry point of the forked executor process (see `child.ts`). */
import { serveParent } from './child.js';

serveParent();
