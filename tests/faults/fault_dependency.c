/* A library that the FAULT_MISSING_DEP plugin links against; the test tree
 * keeps it where the loader cannot find it. */
int plexus_fault_dependency(void) { return 42; }
