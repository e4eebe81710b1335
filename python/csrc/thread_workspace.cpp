#include "thread_workspace.h"

namespace tg::python {

evg::frontend::KernelWorkspace& thread_workspace() {
  thread_local evg::frontend::KernelWorkspace workspace;
  return workspace;
}

}  // namespace tg::python
