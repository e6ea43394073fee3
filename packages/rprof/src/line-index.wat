;; The Rprof line index (WebAssembly text; built into line-index-wasm.ts by
;; scripts/build-line-index.mjs, driven by line-index.ts, which explains why it exists).
;;
;; `scan` splits the bytes of a window into lines (LF, CRLF or CR ends) and gives each line an
;; id: equal keys get equal ids, for the whole parse. A line whose id the caller has marked known
;; (KNOWN) is a repeat: only its stack entry is handed back, in runs; the scan stops at any other
;; line for the caller to parse. The key of a line is its bytes, or with a
;; well-formed memory prefix `:small:big:nodes:dups:` (1 to 15 digits each, as the reader's
;; `memoryPrefix` accepts) the bytes after it. Id 0 means "no id" (the caller then parses the
;; line each time it comes and never marks it known): the table is full (65,536 keys, of which
;; names, see `frames`, take at most 16,384), the key store is full, the key is too long, the line
;; probed too many slots, or another key has its hash and length. Every bound is a constant here, so a crafted file cannot make the index
;; slow or big; it can only make lines take the caller's slower text path.
;;
;; Memory layout (byte offsets; line-index.ts has the same constants):
;;   SLOTS    0x000000  131,072 slots x 4 B: entry id, 0 = empty (open addressing, linear probing)
;;   ENTRIES  0x080000  65,536 entries x 12 B: key offset, key length, hash (id e at (e-1)*12)
;;   KNOWN    0x140000  65,536 x 16 B, written by the caller: per id the epoch, the stack entry
;;                      its line recorded and that stack's number of frames (id e at (e-1)*16);
;;                      a line whose id is known in the current epoch is a repeat
;;   REPEATS  0x240000  16,384 x 4 B: the stack entries of consecutive repeated lines
;;   NUMBERS  0x250000  16,384 x 4 x 8 B: their memory prefixes' numbers (f64; in memory runs)
;;   LINE     0x2D0000  40 B: the line that stopped `scan` (id, line start, key start, line
;;                      end), then why it stopped and where to continue (see `scan`), the
;;                      repeats' frames together (f64 at +24), and `frames`' GC flag (at +32)
;;   FRAMES   0x2E0000  4,096 x 16 B: the frames `frames` parsed (name id, file number, line f64)
;;   WINDOW   0x2F0000  1 MiB of input: the caller's carried incomplete line, then new bytes
;;   KEYS     0x3F0000  the keys' bytes (and frame names' bytes, see `frames`), at most 16 MiB;
;;                      memory grows as they come
(module
  (memory (export "memory") 63 319)

  (global $seed (mut i32) (i32.const 0))
  ;; Entries so far (ids are 1..$count), and how many of them `frames` made for names.
  (global $count (mut i32) (i32.const 0))
  (global $nameCount (mut i32) (i32.const 0))
  ;; End of the key store.
  (global $keyEnd (mut i32) (i32.const 0x3F0000))
  ;; The caller's state (`setState`, `init`): current epoch, whether lines of the run have the memory
  ;; prefix, and the longest line (bytes) that may be a repeat without being decoded.
  (global $epoch (mut i32) (i32.const 0))
  (global $memoryRun (mut i32) (i32.const 0))
  (global $maxRepeatBytes (mut i32) (i32.const 0))

  ;; Sets the seed of the hashes (random per parse; an instance serves one parse).
  (func (export "init") (param $seed i32) (param $maxRepeatBytes i32)
    (global.set $seed (local.get $seed))
    (global.set $maxRepeatBytes (local.get $maxRepeatBytes)))

  (func (export "setState") (param $epoch i32) (param $memoryRun i32)
    (global.set $epoch (local.get $epoch))
    (global.set $memoryRun (local.get $memoryRun)))

  ;; Scans the lines in [p, end) (a line is complete once its LF or CR is in the window): the
  ;; stack entries of repeats go to REPEATS (and their memory numbers to NUMBERS) until a line
  ;; that is not one, which goes to LINE. Returns the number of repeats, and writes why it
  ;; stopped at LINE + 16 (0: no complete line left, 1: a line to parse at LINE, 2: REPEATS
  ;; full) and where to continue at LINE + 20, and the repeats' frames together (the frame
  ;; counts the caller wrote to KNOWN) at LINE + 24: the caller checks its limits with it.
  (func (export "scan") (param $p i32) (param $end i32) (result i32)
    (local $n i32) (local $start i32) (local $keyStart i32) (local $lineEnd i32) (local $id i32)
    (local $q i32) (local $digits i32) (local $group i32) (local $c i32) (local $h i32)
    (local $value f64) (local $known i32) (local $h64 i64) (local $word i64) (local $lf i64) (local $cr i64)
    (local $ends i64) (local $tail i64) (local $k i32) (local $frames f64)
    (local $prevKey i32) (local $prevLen i32) (local $prevId i32)
    (block $stop
      (loop $lines
        (if (i32.eq (local.get $n) (i32.const 16384))
          (then (i32.store (i32.const 0x2D0010) (i32.const 2)) (i32.store (i32.const 0x2D0014) (local.get $p)) (br $stop)))
        (local.set $start (local.get $p))
        (local.set $keyStart (local.get $p))
        ;; A memory prefix: four groups of 1-15 digits, each followed by ':'. The numbers go to
        ;; NUMBERS (overwritten by the next line unless this one is a repeat).
        (block $noPrefix
          (br_if $noPrefix (i32.ge_u (local.get $p) (local.get $end)))
          (br_if $noPrefix (i32.ne (i32.load8_u (local.get $p)) (i32.const 58)))
          (local.set $q (i32.add (local.get $p) (i32.const 1)))
          (local.set $group (i32.const 0))
          (loop $groups
            (local.set $digits (local.get $q))
            (local.set $value (f64.const 0))
            (block $endDigits
              (loop $digit
                (br_if $endDigits (i32.ge_u (local.get $q) (local.get $end)))
                (local.set $c (i32.sub (i32.load8_u (local.get $q)) (i32.const 48)))
                (br_if $endDigits (i32.gt_u (local.get $c) (i32.const 9)))
                (local.set $value (f64.add (f64.mul (local.get $value) (f64.const 10)) (f64.convert_i32_u (local.get $c))))
                (local.set $q (i32.add (local.get $q) (i32.const 1)))
                (br $digit)))
            (local.set $digits (i32.sub (local.get $q) (local.get $digits)))
            (br_if $noPrefix (i32.eqz (local.get $digits)))
            (br_if $noPrefix (i32.gt_u (local.get $digits) (i32.const 15))) ;; exact in an f64
            (br_if $noPrefix (i32.ge_u (local.get $q) (local.get $end)))
            (br_if $noPrefix (i32.ne (i32.load8_u (local.get $q)) (i32.const 58)))
            (f64.store (i32.add (i32.add (i32.const 0x250000) (i32.shl (local.get $n) (i32.const 5))) (i32.shl (local.get $group) (i32.const 3)))
              (local.get $value))
            (local.set $q (i32.add (local.get $q) (i32.const 1)))
            (local.set $group (i32.add (local.get $group) (i32.const 1)))
            (br_if $groups (i32.lt_u (local.get $group) (i32.const 4))))
          (local.set $keyStart (local.get $q))
          (local.set $p (local.get $q)))
        ;; The key's bytes up to the line end, hashed from the seed a word (8 bytes) at a time,
        ;; the last, partial word masked (also when the bytes are taken one by one near the
        ;; window's end): equal keys hash equally wherever they lie. A LF or CR in word w is a
        ;; zero byte of w ^ 0x0a..0a or w ^ 0x0d..0d; x has one where (x - 0x01..01) & ~x &
        ;; 0x80..80 is not 0, whose lowest set bit is in the first one.
        (block $interned
        ;; R repeats a line while the program stays put: a key equal to the previous line's (in
        ;; this call), followed by a line end, has its id without hashing and probing.
        (if (local.get $prevId)
          (then
            (local.set $q (i32.add (local.get $p) (local.get $prevLen)))
            (if (i32.lt_u (local.get $q) (local.get $end))
              (then
                (local.set $c (i32.load8_u (local.get $q)))
                (if (i32.and (i32.or (i32.eq (local.get $c) (i32.const 10)) (i32.eq (local.get $c) (i32.const 13)))
                             (call $equal (local.get $prevKey) (local.get $p) (local.get $prevLen)))
                  (then
                    (local.set $id (local.get $prevId))
                    (local.set $p (local.get $q))
                    (local.set $lineEnd (local.get $q))
                    (br $interned)))))))
        (local.set $h64 (i64.xor (i64.extend_i32_u (global.get $seed)) (i64.const 0xcbf29ce484222325)))
        (block $eol
          (block $nearEnd
            (loop $words
              (br_if $nearEnd (i32.gt_u (i32.add (local.get $p) (i32.const 8)) (local.get $end)))
              (local.set $word (i64.load (local.get $p)))
              (local.set $lf (i64.xor (local.get $word) (i64.const 0x0a0a0a0a0a0a0a0a)))
              (local.set $cr (i64.xor (local.get $word) (i64.const 0x0d0d0d0d0d0d0d0d)))
              (local.set $ends
                (i64.and (i64.or (i64.and (i64.sub (local.get $lf) (i64.const 0x0101010101010101)) (i64.xor (local.get $lf) (i64.const -1)))
                                 (i64.and (i64.sub (local.get $cr) (i64.const 0x0101010101010101)) (i64.xor (local.get $cr) (i64.const -1))))
                         (i64.const 0x8080808080808080)))
              (if (i64.ne (local.get $ends) (i64.const 0))
                (then
                  ;; The line ends at byte k of this word: its bytes before k are the last word.
                  (local.set $k (i32.wrap_i64 (i64.shr_u (i64.ctz (local.get $ends)) (i64.const 3))))
                  (local.set $tail (i64.and (local.get $word)
                    (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (i32.shl (local.get $k) (i32.const 3)))) (i64.const 1))))
                  (local.set $p (i32.add (local.get $p) (local.get $k)))
                  (local.set $c (i32.load8_u (local.get $p)))
                  (br $eol)))
              ;; FNV-style: xor the word in, multiply, fold the high bits down.
              (local.set $h64 (i64.mul (i64.xor (local.get $h64) (local.get $word)) (i64.const 0x100000001b3)))
              (local.set $h64 (i64.xor (local.get $h64) (i64.shr_u (local.get $h64) (i64.const 29))))
              (local.set $p (i32.add (local.get $p) (i32.const 8)))
              (br $words)))
          ;; Fewer than 8 bytes left in the window: one by one, gathered into the last word.
          (local.set $tail (i64.const 0))
          (local.set $k (i32.const 0))
          (loop $bytes
            (if (i32.ge_u (local.get $p) (local.get $end)) ;; incomplete: the caller carries it
              (then (i32.store (i32.const 0x2D0010) (i32.const 0)) (i32.store (i32.const 0x2D0014) (local.get $start)) (br $stop)))
            (local.set $c (i32.load8_u (local.get $p)))
            (br_if $eol (i32.eq (local.get $c) (i32.const 10)))
            (br_if $eol (i32.eq (local.get $c) (i32.const 13)))
            (local.set $tail (i64.or (local.get $tail)
              (i64.shl (i64.extend_i32_u (local.get $c)) (i64.extend_i32_u (i32.shl (local.get $k) (i32.const 3))))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $bytes)))
        ;; The last word, as each word above (inline: faster than a call in baseline code).
        (local.set $h64 (i64.mul (i64.xor (local.get $h64) (local.get $tail)) (i64.const 0x100000001b3)))
        (local.set $h64 (i64.xor (local.get $h64) (i64.shr_u (local.get $h64) (i64.const 29))))
        (local.set $h (i32.wrap_i64 (i64.xor (local.get $h64) (i64.shr_u (local.get $h64) (i64.const 32)))))
        (local.set $lineEnd (local.get $p))
        (local.set $id (call $intern (local.get $keyStart) (i32.sub (local.get $lineEnd) (local.get $keyStart)) (call $mix (local.get $h)) (i32.const 0))))
        (local.set $prevKey (local.get $keyStart))
        (local.set $prevLen (i32.sub (local.get $lineEnd) (local.get $keyStart)))
        (local.set $prevId (local.get $id))
        ;; Past the terminator ($c): CRLF is one (a CR at the window's end: the caller skips a LF
        ;; that starts the next bytes).
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (if (i32.and (i32.eq (local.get $c) (i32.const 13))
                     (i32.lt_u (local.get $p) (local.get $end)))
          (then (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 10))
            (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))))
        ;; A repeat: its id known in this epoch, with a memory prefix exactly when the run has
        ;; one (a key after a prefix may equal a whole line without one), and not too long.
        (if (i32.ne (local.get $id) (i32.const 0))
          (then
            (local.set $known (i32.add (i32.const 0x140000) (i32.shl (i32.sub (local.get $id) (i32.const 1)) (i32.const 4))))
            (if (i32.and
                  (i32.and (i32.eq (i32.load (local.get $known)) (global.get $epoch))
                           (i32.eq (i32.ne (local.get $keyStart) (local.get $start)) (global.get $memoryRun)))
                  (i32.le_u (i32.sub (local.get $lineEnd) (local.get $start)) (global.get $maxRepeatBytes)))
              (then
                (i32.store (i32.add (i32.const 0x240000) (i32.shl (local.get $n) (i32.const 2)))
                  (i32.load offset=4 (local.get $known)))
                (local.set $frames (f64.add (local.get $frames) (f64.convert_i32_u (i32.load offset=8 (local.get $known)))))
                (local.set $n (i32.add (local.get $n) (i32.const 1)))
                (br $lines)))))
        (i32.store (i32.const 0x2D0000) (local.get $id))
        (i32.store (i32.const 0x2D0004) (local.get $start))
        (i32.store (i32.const 0x2D0008) (local.get $keyStart))
        (i32.store (i32.const 0x2D000C) (local.get $lineEnd))
        (i32.store (i32.const 0x2D0010) (i32.const 1))
        (i32.store (i32.const 0x2D0014) (local.get $p))))
    (f64.store (i32.const 0x2D0018) (local.get $frames))
    (local.get $n))

  ;; Parses the trace line whose key (the bytes after a memory prefix) is [p, end) as the reader's
  ;; `parseTraceLine` does, for lines it parses without error, limit or cut-off part: an optional
  ;; `"<GC>" `, then names in quotes, each with an optional `file#line ` srcref before it (file
  ;; numbers of 1 to 9 digits, not 0; lines of 1 to 15 digits). A name ends at the first `" `
  ;; followed by the end of the line, another `"` or a srcref followed by a space (or cut off at
  ;; the end: the line is then refused). Each name gets the id of its bytes (interned as the line
  ;; keys are); the frames go to FRAMES (name id, file number or 0, line as f64), the GC flag to
  ;; LINE + 32. Returns the number of frames, or -1 for any other line (more than 4,096 frames, a
  ;; name without an id, anything the text parser reports or refuses): the caller then decodes
  ;; the line and gives it to the text parser, whose errors and warnings stay the only ones.
  ;; Only ASCII bytes delimit, and UTF-8 decoding keeps every ASCII byte (an invalid sequence
  ;; before one becomes U+FFFD), so the names are the text parser's, decoded on their own.
  (func (export "frames") (param $p i32) (param $end i32) (result i32)
    (local $n i32) (local $j i32) (local $after i32) (local $c i32) (local $id i32) (local $len i32)
    (local $fileNo i32) (local $line f64) (local $digits i32) (local $out i32)
    (i32.store (i32.const 0x2D0020) (i32.const 0))
    ;; `"<GC>" ` (22 3C 47 43 3E 22 20)
    (if (i32.le_u (i32.add (local.get $p) (i32.const 7)) (local.get $end))
      (then (if (i32.and (i32.and (i32.eq (i32.load (local.get $p)) (i32.const 0x43473C22))
                                  (i32.eq (i32.load16_u offset=4 (local.get $p)) (i32.const 0x223E)))
                         (i32.eq (i32.load8_u offset=6 (local.get $p)) (i32.const 32)))
        (then
          (i32.store (i32.const 0x2D0020) (i32.const 1))
          (local.set $p (i32.add (local.get $p) (i32.const 7)))))))
    (loop $frames
      (if (i32.ge_u (local.get $p) (local.get $end))
        (then (return (if (result i32) (local.get $digits) (then (i32.const -1)) (else (local.get $n))))))
      (local.set $c (i32.load8_u (local.get $p)))
      (if (i32.eq (local.get $c) (i32.const 34))
        (then
          ;; The name's end: the first `" ` at j > p that ends it (see above).
          (local.set $j (i32.add (local.get $p) (i32.const 1)))
          (block $found
            (loop $search
              (if (i32.ge_u (i32.add (local.get $j) (i32.const 1)) (local.get $end)) (then (return (i32.const -1))))
              (if (i32.and (i32.eq (i32.load8_u (local.get $j)) (i32.const 34))
                           (i32.eq (i32.load8_u offset=1 (local.get $j)) (i32.const 32)))
                (then
                  (local.set $after (i32.add (local.get $j) (i32.const 2)))
                  (br_if $found (i32.eq (local.get $after) (local.get $end)))
                  (br_if $found (i32.eq (i32.load8_u (local.get $after)) (i32.const 34)))
                  (br_if $found (call $srcrefAt (local.get $after) (local.get $end)))))
              (local.set $j (i32.add (local.get $j) (i32.const 1)))
              (br $search)))
          (local.set $len (i32.sub (local.get $j) (i32.add (local.get $p) (i32.const 1))))
          (if (i32.eqz (local.get $len)) (then (return (i32.const -1))))
          (if (i32.ge_u (local.get $n) (i32.const 4096)) (then (return (i32.const -1))))
          (local.set $id (call $intern (i32.add (local.get $p) (i32.const 1)) (local.get $len)
            (call $mix (call $hashBytes (i32.add (local.get $p) (i32.const 1)) (local.get $len))) (i32.const 1)))
          (if (i32.eqz (local.get $id)) (then (return (i32.const -1))))
          (local.set $out (i32.add (i32.const 0x2E0000) (i32.shl (local.get $n) (i32.const 4))))
          (i32.store (local.get $out) (local.get $id))
          (i32.store offset=4 (local.get $out) (if (result i32) (local.get $digits) (then (local.get $fileNo)) (else (i32.const 0))))
          (f64.store offset=8 (local.get $out) (if (result f64) (local.get $digits) (then (local.get $line)) (else (f64.const 0))))
          (local.set $digits (i32.const 0))
          (local.set $n (i32.add (local.get $n) (i32.const 1)))
          (local.set $p (i32.add (local.get $j) (i32.const 2)))
          (br $frames)))
      ;; A srcref `file#line ` (not after another one: $digits is set while one is pending).
      (if (i32.or (local.get $digits) (i32.gt_u (i32.sub (local.get $c) (i32.const 48)) (i32.const 9)))
        (then (return (i32.const -1))))
      (local.set $fileNo (i32.const 0))
      (local.set $j (local.get $p))
      (loop $file
        (local.set $c (i32.sub (i32.load8_u (local.get $j)) (i32.const 48)))
        (if (i32.le_u (local.get $c) (i32.const 9))
          (then
            (local.set $fileNo (i32.add (i32.mul (local.get $fileNo) (i32.const 10)) (local.get $c)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $file (i32.lt_u (local.get $j) (local.get $end))))))
      (if (i32.or (i32.gt_u (i32.sub (local.get $j) (local.get $p)) (i32.const 9)) (i32.eqz (local.get $fileNo)))
        (then (return (i32.const -1))))
      (if (i32.ge_u (local.get $j) (local.get $end)) (then (return (i32.const -1))))
      (if (i32.ne (i32.load8_u (local.get $j)) (i32.const 35)) (then (return (i32.const -1))))
      (local.set $p (i32.add (local.get $j) (i32.const 1)))
      (local.set $j (local.get $p))
      (local.set $line (f64.const 0))
      (block $lineEnd
        (loop $lineDigits
          (br_if $lineEnd (i32.ge_u (local.get $j) (local.get $end)))
          (local.set $c (i32.sub (i32.load8_u (local.get $j)) (i32.const 48)))
          (br_if $lineEnd (i32.gt_u (local.get $c) (i32.const 9)))
          (local.set $line (f64.add (f64.mul (local.get $line) (f64.const 10)) (f64.convert_i32_u (local.get $c))))
          (local.set $j (i32.add (local.get $j) (i32.const 1)))
          (br $lineDigits)))
      (local.set $digits (i32.sub (local.get $j) (local.get $p)))
      (if (i32.or (i32.eqz (local.get $digits)) (i32.gt_u (local.get $digits) (i32.const 15))) ;; exact in an f64
        (then (return (i32.const -1))))
      (if (i32.ge_u (local.get $j) (local.get $end)) (then (return (i32.const -1))))
      (if (i32.ne (i32.load8_u (local.get $j)) (i32.const 32)) (then (return (i32.const -1))))
      (local.set $p (i32.add (local.get $j) (i32.const 1)))
      (br $frames))
    (unreachable))

  ;; Whether a srcref followed by a space, or one cut off by the end of the line, starts at p (the
  ;; text parser's `srcrefSpaceAt(s, p) > 0`).
  (func $srcrefAt (param $p i32) (param $end i32) (result i32)
    (local $q i32)
    (local.set $q (local.get $p))
    (block $fileEnd
      (loop $fileDigits
        (br_if $fileEnd (i32.ge_u (local.get $q) (local.get $end)))
        (br_if $fileEnd (i32.gt_u (i32.sub (i32.load8_u (local.get $q)) (i32.const 48)) (i32.const 9)))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $fileDigits)))
    (if (i32.eq (local.get $q) (local.get $p)) (then (return (i32.const 0))))
    (if (i32.eq (local.get $q) (local.get $end)) (then (return (i32.const 1))))
    (if (i32.ne (i32.load8_u (local.get $q)) (i32.const 35)) (then (return (i32.const 0))))
    (local.set $q (i32.add (local.get $q) (i32.const 1)))
    (local.set $p (local.get $q))
    (block $lineEnd
      (loop $lineDigits
        (br_if $lineEnd (i32.ge_u (local.get $q) (local.get $end)))
        (br_if $lineEnd (i32.gt_u (i32.sub (i32.load8_u (local.get $q)) (i32.const 48)) (i32.const 9)))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $lineDigits)))
    (if (i32.eq (local.get $q) (local.get $end)) (then (return (i32.const 1))))
    (i32.and (i32.ne (local.get $q) (local.get $p)) (i32.eq (i32.load8_u (local.get $q)) (i32.const 32))))

  ;; FNV-1a of the len bytes at p, from the seed (names: short, hashed byte by byte).
  (func $hashBytes (param $p i32) (param $len i32) (result i32)
    (local $h i32) (local $end i32)
    (local.set $h (i32.xor (global.get $seed) (i32.const 0x811c9dc5)))
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (block $done
      (loop $bytes
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $h (i32.mul (i32.xor (local.get $h) (i32.load8_u (local.get $p))) (i32.const 0x01000193)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $bytes)))
    (local.get $h))

  ;; murmur3's finalizer: spreads FNV's bits over the slot bits.
  (func $mix (param $h i32) (result i32)
    (local.set $h (i32.mul (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 16))) (i32.const 0x85ebca6b)))
    (local.set $h (i32.mul (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 13))) (i32.const 0xc2b2ae35)))
    (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 16))))

  ;; The id of the key at [key, key + len) with hash h, added if new; 0 when it gets none.
  ;; Names (isName) get at most 16,384 new ids, so that at least 49,152 are left for lines.
  (func $intern (param $key i32) (param $len i32) (param $h i32) (param $isName i32) (result i32)
    (local $slot i32) (local $probes i32) (local $e i32) (local $entry i32) (local $pages i32)
    (if (i32.gt_u (local.get $len) (i32.const 0x40000)) (then (return (i32.const 0)))) ;; keys <= 256 KiB
    (local.set $slot (i32.and (local.get $h) (i32.const 0x1ffff)))
    (loop $probe
      (local.set $e (i32.load (i32.shl (local.get $slot) (i32.const 2))))
      (if (i32.eqz (local.get $e))
        (then
          ;; New key: at most 65,536 entries and 16 MiB of keys.
          (if (i32.ge_u (global.get $count) (i32.const 65536)) (then (return (i32.const 0))))
          (if (i32.and (local.get $isName) (i32.ge_u (global.get $nameCount) (i32.const 16384))) (then (return (i32.const 0))))
          (if (i32.gt_u (i32.add (global.get $keyEnd) (local.get $len)) (i32.const 0x13F0000)) (then (return (i32.const 0))))
          (local.set $pages (i32.shr_u (i32.add (i32.add (global.get $keyEnd) (local.get $len)) (i32.const 0xffff)) (i32.const 16)))
          (if (i32.gt_u (local.get $pages) (memory.size))
            (then (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
              (then (return (i32.const 0))))))
          (global.set $count (i32.add (global.get $count) (i32.const 1)))
          (global.set $nameCount (i32.add (global.get $nameCount) (local.get $isName)))
          (local.set $e (global.get $count))
          (i32.store (i32.shl (local.get $slot) (i32.const 2)) (local.get $e))
          (local.set $entry (i32.add (i32.const 0x80000) (i32.mul (i32.sub (local.get $e) (i32.const 1)) (i32.const 12))))
          (i32.store (local.get $entry) (global.get $keyEnd))
          (i32.store offset=4 (local.get $entry) (local.get $len))
          (i32.store offset=8 (local.get $entry) (local.get $h))
          (memory.copy (global.get $keyEnd) (local.get $key) (local.get $len))
          (global.set $keyEnd (i32.add (global.get $keyEnd) (local.get $len)))
          (return (local.get $e))))
      (local.set $entry (i32.add (i32.const 0x80000) (i32.mul (i32.sub (local.get $e) (i32.const 1)) (i32.const 12))))
      (if (i32.and (i32.eq (i32.load offset=8 (local.get $entry)) (local.get $h))
                   (i32.eq (i32.load offset=4 (local.get $entry)) (local.get $len)))
        ;; Another key of the same hash and length gets no id: the seed does not stop crafted
        ;; collisions (flipping a word's top bit passes the multiply unchanged), and this way a
        ;; line costs at most one comparison of its bytes, not one per probe.
        (then (if (call $equal (i32.load (local.get $entry)) (local.get $key) (local.get $len))
          (then (return (local.get $e)))
          (else (return (i32.const 0))))))
      ;; At most 64 probes: a line that finds neither its key nor a free slot gets no id.
      (local.set $probes (i32.add (local.get $probes) (i32.const 1)))
      (if (i32.ge_u (local.get $probes) (i32.const 64)) (then (return (i32.const 0))))
      (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (i32.const 0x1ffff)))
      (br $probe))
    (unreachable))

  ;; Whether the len bytes at a and b are equal (8 at a time, then the rest).
  (func $equal (param $a i32) (param $b i32) (param $len i32) (result i32)
    (local $k i32)
    (block $tail
      (loop $words
        (br_if $tail (i32.gt_u (i32.add (local.get $k) (i32.const 8)) (local.get $len)))
        (if (i64.ne (i64.load (i32.add (local.get $a) (local.get $k))) (i64.load (i32.add (local.get $b) (local.get $k))))
          (then (return (i32.const 0))))
        (local.set $k (i32.add (local.get $k) (i32.const 8)))
        (br $words)))
    (loop $bytes
      (if (i32.lt_u (local.get $k) (local.get $len))
        (then
          (if (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $k))) (i32.load8_u (i32.add (local.get $b) (local.get $k))))
            (then (return (i32.const 0))))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (br $bytes))))
    (i32.const 1))
)
