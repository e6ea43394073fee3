/**
 * Runs before every test file of every package (see `vitest.shared.ts`).
 *
 * Many tests spawn Node children and assert their stderr is empty. Node prints a warning on stderr
 * ("The 'NO_COLOR' env is ignored due to the 'FORCE_COLOR' env being set") as soon as a child
 * writes with `console` while both variables are set, which is what CI under a terminal does: nx
 * forces colour for its tasks and the runner sets NO_COLOR. Children inherit this process's
 * environment, so the tests run with colour forced by nobody.
 */
delete process.env.FORCE_COLOR;
