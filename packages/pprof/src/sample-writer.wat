;; The pprof encoder's Sample messages, written in WebAssembly (see sample-writer.ts for why).
;;
;; Input, in linear memory, placed by sample-writer.ts:
;;   offsets: nS + 1 u32, sample s's location ids are ids[offsets[s] .. offsets[s + 1])
;;   ids:     u32 location ids
;;   values:  int64 (two's complement, little-endian); value j of sample s at
;;            values + s * sampleStride + j * valueStride (bytes)
;; Output: the Sample messages (field 2 of Profile), exactly as encode.ts's writeSamples writes
;; them: location ids packed when more than two, else one tagged varint each; values packed when
;; more than two sample types, else one tagged varint each. No labels (those samples stay in JS).
(module
  (memory (export "memory") 1)
  (global $largest (mut i32) (i32.const 0))

  ;; The largest Sample message (without its tag and length) the last writeSamples wrote.
  (func (export "largest") (result i32) (global.get $largest))

  ;; Bytes of v as a varint: ceil(bits / 7) with bits of v | 1; the division by 7 as a
  ;; multiplication (exact for these small numbers; baseline code would divide).
  (func $sizeU32 (param $v i32) (result i32)
    (i32.shr_u
      (i32.mul (i32.sub (i32.const 38) (i32.clz (i32.or (local.get $v) (i32.const 1)))) (i32.const 9363))
      (i32.const 16)))
  (func $size64 (param $v i64) (result i32)
    (i32.shr_u
      (i32.mul
        (i32.wrap_i64 (i64.sub (i64.const 70) (i64.clz (i64.or (local.get $v) (i64.const 1)))))
        (i32.const 9363))
      (i32.const 16)))

  ;; Writes v as a varint at p; returns the position after it. Below 2^28 (ids, sizes, most
  ;; values) without a branch on the length, as encode.ts's writeSamples does for ids: c1..c3 say
  ;; whether a second, third, fourth byte is needed; one 4-byte store writes them (what follows
  ;; overwrites the bytes past the varint's end: the output area has room past the largest encoding).
  (func $putU32 (param $p i32) (param $v i32) (result i32)
    (local $c1 i32) (local $c2 i32) (local $c3 i32)
    (if (i32.lt_u (local.get $v) (i32.const 0x10000000))
      (then
        (local.set $c1 (i32.shr_u (i32.sub (i32.const 0x7f) (local.get $v)) (i32.const 31)))
        (local.set $c2 (i32.shr_u (i32.sub (i32.const 0x3fff) (local.get $v)) (i32.const 31)))
        (local.set $c3 (i32.shr_u (i32.sub (i32.const 0x1fffff) (local.get $v)) (i32.const 31)))
        (i32.store (local.get $p)
          (i32.or
            (i32.or
              (i32.or (i32.and (local.get $v) (i32.const 0x7f)) (i32.shl (local.get $c1) (i32.const 7)))
              (i32.shl
                (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 7)) (i32.const 0x7f))
                        (i32.shl (local.get $c2) (i32.const 7)))
                (i32.const 8)))
            (i32.or
              (i32.shl
                (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 14)) (i32.const 0x7f))
                        (i32.shl (local.get $c3) (i32.const 7)))
                (i32.const 16))
              (i32.shl (i32.shr_u (local.get $v) (i32.const 21)) (i32.const 24)))))
        (return (i32.add (i32.add (i32.add (i32.add (local.get $p) (i32.const 1)) (local.get $c1)) (local.get $c2)) (local.get $c3)))))
    (i64.store (local.get $p)
      (i64.or
        (i64.or
          (i64.or (i64.extend_i32_u (i32.or (i32.and (local.get $v) (i32.const 0x7f)) (i32.const 0x80)))
                  (i64.shl (i64.extend_i32_u (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 7)) (i32.const 0x7f)) (i32.const 0x80))) (i64.const 8)))
          (i64.or (i64.shl (i64.extend_i32_u (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 14)) (i32.const 0x7f)) (i32.const 0x80))) (i64.const 16))
                  (i64.shl (i64.extend_i32_u (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 21)) (i32.const 0x7f)) (i32.const 0x80))) (i64.const 24))))
        (i64.shl (i64.extend_i32_u (i32.shr_u (local.get $v) (i32.const 28))) (i64.const 32))))
    (i32.add (local.get $p) (i32.const 5)))
  (func $put64 (param $p i32) (param $v i64) (result i32)
    (block $last
      (loop $more
        (br_if $last (i64.lt_u (local.get $v) (i64.const 0x80)))
        (i64.store8 (local.get $p) (i64.or (local.get $v) (i64.const 0x80)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $v (i64.shr_u (local.get $v) (i64.const 7)))
        (br $more)))
    (i64.store8 (local.get $p) (local.get $v))
    (i32.add (local.get $p) (i32.const 1)))

  ;; Writes the nS samples' messages at out; returns the position after them (0 for offsets out
  ;; of order, see below). The varint writes are putU32's fast path inlined (four copies):
  ;; baseline code does not inline calls, and with calls this function took twice as long on the
  ;; Rprof benchmark (14 ms against 7, loaded machine).
  (func (export "writeSamples")
    (param $nS i32) (param $nT i32) (param $offsets i32) (param $ids i32) (param $values i32)
    (param $sampleStride i32) (param $valueStride i32) (param $out i32) (result i32)
    (local $s i32) (local $first i32) (local $end i32) (local $k i32) (local $count i32)
    (local $idPayload i32) (local $valuePayload i32) (local $size i32) (local $v i32)
    (local $j i32) (local $vp i32) (local $p i32) (local $largest i32) (local $val i64)
    (local $c1 i32) (local $c2 i32) (local $c3 i32) (local $same i32) (local $a0 i64) (local $a1 i64)
    (local $prev0 i64) (local $prev1 i64) (local $prevValuesAt i32) (local $prevValuesLength i32) (local $nIds i32)
    (local.set $p (local.get $out))
    ;; The ids placed (they end where the values start).
    (local.set $nIds (i32.shr_u (i32.sub (local.get $values) (local.get $ids)) (i32.const 2)))
    (block $done
      (loop $sample
        (br_if $done (i32.ge_u (local.get $s) (local.get $nS)))
        ;; Byte addresses of the sample's first and past-last id. Offsets that decrease or end
        ;; past the ids (a profile built wrong, not one a reader made) return 0: reading there
        ;; would trap or read other columns, and the JS loops answer such a profile.
        (local.set $first (i32.load (local.get $offsets)))
        (local.set $end (i32.load offset=4 (local.get $offsets)))
        (if (i32.or (i32.lt_u (local.get $end) (local.get $first)) (i32.gt_u (local.get $end) (local.get $nIds)))
          (then (return (i32.const 0))))
        (local.set $first (i32.add (local.get $ids) (i32.shl (local.get $first) (i32.const 2))))
        (local.set $end (i32.add (local.get $ids) (i32.shl (local.get $end) (i32.const 2))))
        (local.set $count (i32.shr_s (i32.sub (local.get $end) (local.get $first)) (i32.const 2)))
        ;; Sizes: the ids' varints, then the values' varints.
        (local.set $idPayload (i32.const 0))
        (local.set $k (local.get $first))
        (block $idsSized
          (loop $id
            (br_if $idsSized (i32.ge_u (local.get $k) (local.get $end)))
            (local.set $idPayload (i32.add (local.get $idPayload)
              (i32.shr_u
                (i32.mul (i32.sub (i32.const 38) (i32.clz (i32.or (i32.load (local.get $k)) (i32.const 1)))) (i32.const 9363))
                (i32.const 16))))
            (local.set $k (i32.add (local.get $k) (i32.const 4)))
            (br $id)))
        (local.set $vp (i32.add (local.get $values) (i32.mul (local.get $s) (local.get $sampleStride))))
        ;; With at most two sample types, a sample whose values are the previous sample's (in
        ;; Rprof's profiles nearly all: a count of 1 and the interval) reuses their encoding.
        (local.set $same (i32.const 0))
        (if (i32.le_u (local.get $nT) (i32.const 2))
          (then
            (local.set $a0 (if (result i64) (local.get $nT) (then (i64.load (local.get $vp))) (else (i64.const 0))))
            (local.set $a1 (if (result i64) (i32.eq (local.get $nT) (i32.const 2))
              (then (i64.load (i32.add (local.get $vp) (local.get $valueStride)))) (else (i64.const 0))))
            (local.set $same (i32.and (i32.ne (local.get $s) (i32.const 0))
              (i32.and (i64.eq (local.get $a0) (local.get $prev0)) (i64.eq (local.get $a1) (local.get $prev1)))))
            (local.set $prev0 (local.get $a0))
            (local.set $prev1 (local.get $a1))))
        (if (i32.eqz (local.get $same))
          (then
            (local.set $valuePayload (i32.const 0))
            (local.set $j (i32.const 0))
            (block $valuesSized
              (loop $value
                (br_if $valuesSized (i32.ge_u (local.get $j) (local.get $nT)))
                (local.set $val (i64.load (i32.add (local.get $vp) (i32.mul (local.get $j) (local.get $valueStride)))))
                (local.set $valuePayload (i32.add (local.get $valuePayload)
                  (if (result i32) (i64.lt_u (local.get $val) (i64.const 0x100000000))
                    (then (i32.shr_u
                      (i32.mul (i32.sub (i32.const 38) (i32.clz (i32.or (i32.wrap_i64 (local.get $val)) (i32.const 1)))) (i32.const 9363))
                      (i32.const 16)))
                    (else (call $size64 (local.get $val))))))
                (local.set $j (i32.add (local.get $j) (i32.const 1)))
                (br $value)))))
        (local.set $size (i32.add
          (if (result i32) (i32.gt_s (local.get $count) (i32.const 2))
            (then (i32.add (i32.add (i32.const 1) (call $sizeU32 (local.get $idPayload))) (local.get $idPayload)))
            (else (i32.add (local.get $count) (local.get $idPayload))))
          (if (result i32) (i32.gt_u (local.get $nT) (i32.const 2))
            (then (i32.add (i32.add (i32.const 1) (call $sizeU32 (local.get $valuePayload))) (local.get $valuePayload)))
            (else (i32.add (local.get $nT) (local.get $valuePayload))))))
        (if (i32.gt_u (local.get $size) (local.get $largest))
          (then (local.set $largest (local.get $size))))
        ;; The message: tag 2 (length-delimited), its size, then its fields.
        (i32.store8 (local.get $p) (i32.const 0x12))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $v (local.get $size))
        (if (i32.lt_u (local.get $v) (i32.const 0x10000000))
          (then
            (local.set $c1 (i32.shr_u (i32.sub (i32.const 0x7f) (local.get $v)) (i32.const 31)))
            (local.set $c2 (i32.shr_u (i32.sub (i32.const 0x3fff) (local.get $v)) (i32.const 31)))
            (local.set $c3 (i32.shr_u (i32.sub (i32.const 0x1fffff) (local.get $v)) (i32.const 31)))
            (i32.store (local.get $p)
              (i32.or
                (i32.or
                  (i32.or (i32.and (local.get $v) (i32.const 0x7f)) (i32.shl (local.get $c1) (i32.const 7)))
                  (i32.shl (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 7)) (i32.const 0x7f)) (i32.shl (local.get $c2) (i32.const 7))) (i32.const 8)))
                (i32.or
                  (i32.shl (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 14)) (i32.const 0x7f)) (i32.shl (local.get $c3) (i32.const 7))) (i32.const 16))
                  (i32.shl (i32.shr_u (local.get $v) (i32.const 21)) (i32.const 24)))))
            (local.set $p (i32.add (i32.add (local.get $p) (i32.const 1)) (i32.add (local.get $c1) (i32.add (local.get $c2) (local.get $c3))))))
          (else (local.set $p (call $putU32 (local.get $p) (local.get $v)))))
        (if (i32.gt_s (local.get $count) (i32.const 2))
          (then
            (i32.store8 (local.get $p) (i32.const 0x0a))
            (local.set $p (call $putU32 (i32.add (local.get $p) (i32.const 1)) (local.get $idPayload)))
            (local.set $k (local.get $first))
            (block $idsWritten
              (loop $id
                (br_if $idsWritten (i32.ge_u (local.get $k) (local.get $end)))
                (local.set $v (i32.load (local.get $k)))
                (if (i32.lt_u (local.get $v) (i32.const 0x10000000))
                  (then
                    (local.set $c1 (i32.shr_u (i32.sub (i32.const 0x7f) (local.get $v)) (i32.const 31)))
                    (local.set $c2 (i32.shr_u (i32.sub (i32.const 0x3fff) (local.get $v)) (i32.const 31)))
                    (local.set $c3 (i32.shr_u (i32.sub (i32.const 0x1fffff) (local.get $v)) (i32.const 31)))
                    (i32.store (local.get $p)
                      (i32.or
                        (i32.or
                          (i32.or (i32.and (local.get $v) (i32.const 0x7f)) (i32.shl (local.get $c1) (i32.const 7)))
                          (i32.shl (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 7)) (i32.const 0x7f)) (i32.shl (local.get $c2) (i32.const 7))) (i32.const 8)))
                        (i32.or
                          (i32.shl (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 14)) (i32.const 0x7f)) (i32.shl (local.get $c3) (i32.const 7))) (i32.const 16))
                          (i32.shl (i32.shr_u (local.get $v) (i32.const 21)) (i32.const 24)))))
                    (local.set $p (i32.add (i32.add (local.get $p) (i32.const 1)) (i32.add (local.get $c1) (i32.add (local.get $c2) (local.get $c3))))))
                  (else (local.set $p (call $putU32 (local.get $p) (local.get $v)))))
                (local.set $k (i32.add (local.get $k) (i32.const 4)))
                (br $id))))
          (else
            (local.set $k (local.get $first))
            (block $idsWritten
              (loop $id
                (br_if $idsWritten (i32.ge_u (local.get $k) (local.get $end)))
                (i32.store8 (local.get $p) (i32.const 0x08))
                (local.set $p (i32.add (local.get $p) (i32.const 1)))
                (local.set $v (i32.load (local.get $k)))
                (if (i32.lt_u (local.get $v) (i32.const 0x10000000))
                  (then
                    (local.set $c1 (i32.shr_u (i32.sub (i32.const 0x7f) (local.get $v)) (i32.const 31)))
                    (local.set $c2 (i32.shr_u (i32.sub (i32.const 0x3fff) (local.get $v)) (i32.const 31)))
                    (local.set $c3 (i32.shr_u (i32.sub (i32.const 0x1fffff) (local.get $v)) (i32.const 31)))
                    (i32.store (local.get $p)
                      (i32.or
                        (i32.or
                          (i32.or (i32.and (local.get $v) (i32.const 0x7f)) (i32.shl (local.get $c1) (i32.const 7)))
                          (i32.shl (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 7)) (i32.const 0x7f)) (i32.shl (local.get $c2) (i32.const 7))) (i32.const 8)))
                        (i32.or
                          (i32.shl (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 14)) (i32.const 0x7f)) (i32.shl (local.get $c3) (i32.const 7))) (i32.const 16))
                          (i32.shl (i32.shr_u (local.get $v) (i32.const 21)) (i32.const 24)))))
                    (local.set $p (i32.add (i32.add (local.get $p) (i32.const 1)) (i32.add (local.get $c1) (i32.add (local.get $c2) (local.get $c3))))))
                  (else (local.set $p (call $putU32 (local.get $p) (local.get $v)))))
                (local.set $k (i32.add (local.get $k) (i32.const 4)))
                (br $id)))))
        (if (local.get $same)
          (then
            ;; The previous values' bytes (at most 22: two tags and two 10-byte varints).
            (i64.store (local.get $p) (i64.load (local.get $prevValuesAt)))
            (i64.store offset=8 (local.get $p) (i64.load offset=8 (local.get $prevValuesAt)))
            (i64.store offset=16 (local.get $p) (i64.load offset=16 (local.get $prevValuesAt)))
            (local.set $p (i32.add (local.get $p) (local.get $prevValuesLength))))
          (else
            (local.set $prevValuesAt (local.get $p))
            (if (i32.gt_u (local.get $nT) (i32.const 2))
              (then
                (i32.store8 (local.get $p) (i32.const 0x12))
                (local.set $p (call $putU32 (i32.add (local.get $p) (i32.const 1)) (local.get $valuePayload)))))
            (local.set $j (i32.const 0))
            (block $valuesWritten
              (loop $value
                (br_if $valuesWritten (i32.ge_u (local.get $j) (local.get $nT)))
                (if (i32.le_u (local.get $nT) (i32.const 2))
                  (then
                    (i32.store8 (local.get $p) (i32.const 0x10))
                    (local.set $p (i32.add (local.get $p) (i32.const 1)))))
                (local.set $val (i64.load
                  (i32.add (local.get $vp) (i32.mul (local.get $j) (local.get $valueStride)))))
                (if (i64.lt_u (local.get $val) (i64.const 0x100000000))
                  (then
                    (local.set $v (i32.wrap_i64 (local.get $val)))
                    (if (i32.lt_u (local.get $v) (i32.const 0x10000000))
                      (then
                        (local.set $c1 (i32.shr_u (i32.sub (i32.const 0x7f) (local.get $v)) (i32.const 31)))
                        (local.set $c2 (i32.shr_u (i32.sub (i32.const 0x3fff) (local.get $v)) (i32.const 31)))
                        (local.set $c3 (i32.shr_u (i32.sub (i32.const 0x1fffff) (local.get $v)) (i32.const 31)))
                        (i32.store (local.get $p)
                          (i32.or
                            (i32.or
                              (i32.or (i32.and (local.get $v) (i32.const 0x7f)) (i32.shl (local.get $c1) (i32.const 7)))
                              (i32.shl (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 7)) (i32.const 0x7f)) (i32.shl (local.get $c2) (i32.const 7))) (i32.const 8)))
                            (i32.or
                              (i32.shl (i32.or (i32.and (i32.shr_u (local.get $v) (i32.const 14)) (i32.const 0x7f)) (i32.shl (local.get $c3) (i32.const 7))) (i32.const 16))
                              (i32.shl (i32.shr_u (local.get $v) (i32.const 21)) (i32.const 24)))))
                        (local.set $p (i32.add (i32.add (local.get $p) (i32.const 1)) (i32.add (local.get $c1) (i32.add (local.get $c2) (local.get $c3))))))
                      (else (local.set $p (call $putU32 (local.get $p) (local.get $v))))))
                  (else (local.set $p (call $put64 (local.get $p) (local.get $val)))))
                (local.set $j (i32.add (local.get $j) (i32.const 1)))
                (br $value)))
            (local.set $prevValuesLength (i32.sub (local.get $p) (local.get $prevValuesAt)))))
        (local.set $offsets (i32.add (local.get $offsets) (i32.const 4)))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $sample)))
    (global.set $largest (local.get $largest))
    (local.get $p))
)
