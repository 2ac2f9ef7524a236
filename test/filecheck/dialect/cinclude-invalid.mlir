// RUN: irgl-opt %s --verify-diagnostics --split-input-file | filecheck %s

// The verifier rules of irgl.cinclude: module scope only, and a relative
// path of plain components.

irgl.cinclude "../benchmarks/dmr/dmr_mesh.cuh"

// CHECK:      'irgl.cinclude' path '../benchmarks/dmr/dmr_mesh.cuh' must not have '..' components

// -----

irgl.cinclude "mesh/../../secret.h"

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cinclude' path 'mesh/../../secret.h' must not have '..' components

// -----

irgl.cinclude "/usr/include/stdio.h"

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cinclude' path '/usr/include/stdio.h' must be relative, not absolute

// -----

irgl.cinclude ""

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cinclude' path '' is empty

// -----

irgl.cinclude "mesh//x.h"

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cinclude' path 'mesh//x.h' has an empty or '.' component

// -----

irgl.cinclude "a\0Ab.h"

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cinclude' path 'a\nb.h' has a character that a C include path cannot hold

// -----

irgl.kernel host @main() {
  irgl.cinclude "dmr_mesh.cuh"
}

// CHECK:      // {{-+}}
// CHECK-NEXT: 'irgl.cinclude' expects parent op 'builtin.module'
