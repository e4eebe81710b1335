#pragma once
// The standard headers the EVG templates use, included by generated kernels before they switch
// on the target's ISA (`#pragma GCC target`), so library code is compiled for the default target.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tilegraph/core/dtype.h"
#include "tilegraph/core/error.h"
#include "tilegraph/evg/driver/epilogue_params.h"
