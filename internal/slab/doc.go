// Package slab hands out short slices cut from larger arrays, for
// builders that make many small slices that live as long as each other:
// the rows of an encoding or of a relaxation. One allocation serves
// thousands of rows, and the garbage collector tracks one object
// instead of each row's.
//
// It does not free: a piece keeps its whole array alive, so it suits
// slices that are dropped together, not ones kept one by one.
package slab
