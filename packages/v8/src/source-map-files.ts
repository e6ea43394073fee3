/**
 * Node.js: finds a script's source map on disk. The script is the profile's file name: a
 * `file://` URL (as V8 names scripts) or an absolute path; other URLs (`node:internal/…`,
 * `https://…`) have no file and no map. The map is the script's last `sourceMappingURL` comment:
 * a `data:` URL (inline map) or a path relative to the script; without a comment, `<script>.map`
 * beside it when that exists.
 */

import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SourceMapInput } from '@jridgewell/trace-mapping';
import { ErrorCodes, ProfkitError } from '@profkit/core';
import { parseSourceMappingUrl, type LoadedSourceMap, type SourceMapLoader } from './source-maps.js';

/** Largest script or map read (a map of a large bundle is tens of MB). */
export const MAX_SOURCE_MAP_FILE_BYTES = 256 * 1024 * 1024;

function scriptPath(scriptUrl: string): string | undefined {
  if (scriptUrl.startsWith('file://')) {
    try {
      return fileURLToPath(scriptUrl);
    } catch {
      return undefined;
    }
  }
  return isAbsolute(scriptUrl) ? scriptUrl : undefined;
}

async function readBounded(path: string): Promise<string | undefined> {
  let size: number;
  try {
    const s = await stat(path);
    if (!s.isFile()) return undefined;
    size = s.size;
  } catch {
    return undefined;
  }
  if (size > MAX_SOURCE_MAP_FILE_BYTES) {
    throw new ProfkitError(ErrorCodes.LIMIT, `${path} is ${size} bytes, more than the ${MAX_SOURCE_MAP_FILE_BYTES} bytes read for source maps`, { file: path, rule: 'source map file size' });
  }
  return readFile(path, 'utf8');
}

/** Decodes a `data:` URL's JSON (base64 or percent-encoded). */
export function decodeDataUrl(url: string, script: string): string {
  const comma = url.indexOf(',');
  if (comma < 0) throw new ProfkitError(ErrorCodes.PARSE, 'the inline source map data: URL has no comma', { file: script, rule: 'data: URL syntax (RFC 2397)' });
  const header = url.slice(5, comma);
  const body = url.slice(comma + 1);
  if (!/^application\/json\b/i.test(header)) {
    throw new ProfkitError(ErrorCodes.PARSE, `the inline source map is of type "${header.split(';')[0]}", not application/json`, { file: script, rule: 'source map data: URL type' });
  }
  try {
    return /;base64$/i.test(header) ? Buffer.from(body, 'base64').toString('utf8') : decodeURIComponent(body);
  } catch (e) {
    throw new ProfkitError(ErrorCodes.PARSE, `the inline source map cannot be decoded: ${(e as Error).message}`, { file: script, rule: 'data: URL syntax (RFC 2397)' });
  }
}

function parseMap(text: string, where: string): SourceMapInput {
  try {
    const m = JSON.parse(text) as unknown;
    if (typeof m !== 'object' || m === null || typeof (m as { mappings?: unknown }).mappings !== 'string') throw new Error('no "mappings" string');
    return m as SourceMapInput;
  } catch (e) {
    throw new ProfkitError(ErrorCodes.PARSE, `${where} is not a source map: ${(e as Error).message}`, { file: where, rule: 'source map v3 JSON' });
  }
}

/** The loader `applySourceMaps` uses on Node: reads scripts and their maps from disk. */
export const nodeSourceMapLoader: SourceMapLoader = async (scriptUrl: string): Promise<LoadedSourceMap | undefined> => {
  const path = scriptPath(scriptUrl);
  if (path === undefined) return undefined;
  const asUrl = (p: string) => (scriptUrl.startsWith('file://') ? pathToFileURL(p).href : p);
  const script = await readBounded(path);
  const comment = script === undefined ? undefined : parseSourceMappingUrl(script);
  if (comment?.startsWith('data:')) return { map: parseMap(decodeDataUrl(comment, path), `${path} (inline map)`), mapUrl: scriptUrl, origin: 'inline' };
  let mapPath = path + '.map';
  if (comment !== undefined) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(comment) && !comment.startsWith('file:')) return undefined; // a map on a server: not read
    mapPath = comment.startsWith('file:') ? fileURLToPath(comment) : resolve(dirname(path), decodeURIComponent(comment));
  }
  const text = await readBounded(mapPath);
  if (text === undefined) {
    if (comment !== undefined) throw new ProfkitError(ErrorCodes.IO, `${path} names the source map ${mapPath}, which cannot be read`, { file: mapPath, rule: 'sourceMappingURL names a readable file' });
    return undefined;
  }
  return { map: parseMap(text, mapPath), mapUrl: asUrl(mapPath), origin: mapPath };
};
