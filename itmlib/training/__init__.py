"""Training: one loop (:mod:`.train`), grids of members with their records and executors (:mod:`.grid`), what a
grid says while it runs (:mod:`.progress`), timing a call (:mod:`.timing`), and whether an arm trained to a
plateau (:mod:`.convergence`)."""
