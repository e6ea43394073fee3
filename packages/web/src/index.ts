/**
 * @profkit/web: the interactive viewer. In the browser, the app (dist/www, built from src/app)
 * reads profiles in a Web Worker on @profkit/core and the bundled adapters. On Node, this entry
 * serves it for one profile on loopback (`startWebServer`, behind `profkit web FILE`) or writes
 * it as a static site (`writeStaticSite`, behind `profkit web --static DIR`).
 */
export { DEFAULT_IDLE_TIMEOUT_MS, MAX_CONNECTIONS, startWebServer, isLoopbackHost, type WebServer, type WebServerOptions } from './server.js';
export { writeStaticSite } from './static.js';
export { APP_DIR, APP_FILES } from './assets.js';
export { PACKAGE_VERSION } from './version.js';
