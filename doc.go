// Command poolsolve plans where model-serving lanes should run across a
// pool of machines, and proves how good that plan is. See README.md.
package main
