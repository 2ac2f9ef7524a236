// RUN: irgl-opt %s --split-input-file | filecheck %s --check-prefix=PRINT
// RUN: %IRGL_ROUNDTRIP | filecheck %s --check-prefix=PRINT
// RUN: irgl-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// irgl.cinclude: custom syntax, and the generic form round trips.

irgl.cinclude "dmr_mesh.cuh"
irgl.cinclude "geometry/mesh.h"

// PRINT:      irgl.cinclude "dmr_mesh.cuh"
// PRINT-NEXT: irgl.cinclude "geometry/mesh.h"
// GENERIC:      "irgl.cinclude"() <{path = "dmr_mesh.cuh"}> : () -> ()
// GENERIC-NEXT: "irgl.cinclude"() <{path = "geometry/mesh.h"}> : () -> ()
