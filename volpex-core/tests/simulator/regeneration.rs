//! Regeneration: killed replicas replaced by new incarnations that replay their program
//! from the start, pulling everything again from the senders' logs (DESIGN.md
//! "Regeneration", issue 17). Every new incarnation must receive exactly what its siblings
//! received, in the same order, exactly once, and finish.
