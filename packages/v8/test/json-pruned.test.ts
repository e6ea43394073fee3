/** What `PrunedValueBuilder` keeps of a JSON value: the shape's fields, stand-ins for the rest, shared copies. */
import { describe, expect, it } from 'vitest';
import { JsonTokenizer, describeJson } from '@profkit/core';
import { PrunedValueBuilder, SCALAR, arrayShape, objectShape, type JsonShape } from '../src/json-pruned.js';
import { enc } from './helpers.js';

function build(text: string, shape: JsonShape, strings?: Map<string, string>, objects?: Map<string, Record<string, unknown>>): unknown {
  const b = new PrunedValueBuilder(shape, strings, objects);
  const t = new JsonTokenizer(b, { file: 'x', format: 'test' });
  t.write(enc(text));
  t.end();
  expect(b.done).toBe(true);
  return b.result;
}

const FRAME = objectShape({ name: SCALAR, line: SCALAR }, true);
const NODE = objectShape({ id: SCALAR, frame: FRAME, kids: arrayShape(SCALAR) });

describe('PrunedValueBuilder', () => {
  it('keeps the keys of the shape and skips the others, whatever they hold', () => {
    expect(build('{"id":1,"x":{"id":2,"kids":[3]},"frame":{"name":"a","y":[1,{"z":2}],"line":3},"kids":[4,5],"w":[[[]]]}', NODE)).toStrictEqual({ id: 1, frame: { name: 'a', line: 3 }, kids: [4, 5] });
  });
  it('a container where a scalar belongs becomes an empty stand-in that describeJson describes as the whole value', () => {
    const whole = JSON.parse('{"id":[1,[2],{"a":3}],"frame":[7],"kids":[{"b":[1,2]},6]}') as Record<string, unknown>;
    const pruned = build(JSON.stringify(whole), NODE) as Record<string, unknown>;
    for (const key of ['id', 'frame']) expect(describeJson(pruned[key])).toBe(describeJson(whole[key]));
    expect(describeJson((pruned.kids as unknown[])[0])).toBe(describeJson((whole.kids as unknown[])[0]));
    expect(pruned.id).toHaveLength(3);
    expect((pruned.id as unknown[]).includes(1)).toBe(false);
    expect((pruned.kids as unknown[])[0]).toStrictEqual({});
  });
  it('a repeated key keeps its last value, as JSON.parse does; scalars at the top are values', () => {
    expect(build('{"id":1,"id":[2],"id":3}', NODE)).toStrictEqual({ id: 3 });
    expect(build('"s"', NODE)).toBe('s');
    expect(build('[1,[2]]', SCALAR)).toHaveLength(2);
  });
  it('interns strings and the objects of an interned shape (equal fields: one object)', () => {
    const strings = new Map<string, string>();
    const objects = new Map<string, Record<string, unknown>>();
    const nodes = build('[{"frame":{"name":"a","line":1}},{"frame":{"line":1,"name":"a"}},{"frame":{"name":"a","line":1}},{"frame":{"name":"a","line":"1"}}]', arrayShape(NODE), strings, objects) as { frame: object }[];
    expect(nodes[2]!.frame).toBe(nodes[0]!.frame);
    expect(nodes[1]!.frame).toStrictEqual(nodes[0]!.frame); // another key order: equal, perhaps another object
    expect(nodes[3]!.frame).not.toBe(nodes[0]!.frame); // the string "1" is not the number 1
    expect([...strings.keys()]).toEqual(['a', '1']);
  });
});
