#!/usr/bin/env node
console.log('profkit');
