#!/bin/sh
# One prepared run for a machine with an NVIDIA GPU (the Vulkan backend):
# build, the Vulkan reference tests on the GPU (every case, fp32; fp16 within
# its bound on the cases that keep it), network speed of the four
# bench_configs networks at batch 1, 8 and 32 (Vulkan fp32 and fp16 against
# PyTorch CUDA eager fp32 and fp16, torch_compare.py; the native CPU backend),
# and predict end to end on centered_pair_small.mp4, top-down and bottom-up,
# fp32 and fp16. About 6 minutes; needs no network and no root, but a Vulkan
# loader (libvulkan.so.1) and the GPU driver's Vulkan ICD (NVIDIA's driver
# ships nvidia_icd.json): point VK_ICD_FILENAMES at it when the loader does not
# find it, and LD_LIBRARY_PATH at a libvulkan.so.1 when there is none.
# PyTorch (with CUDA) comes from the python3 on PATH (PYTHON to choose
# another); without it the comparison is skipped.
#
# Usage: bench/gpu/check.sh [DEVICE]   (DEVICE: cuda by default)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${SLEAPC_DATA_DIR:-$root/../shared/data}
build=${SLEAPC_GPU_BUILD:-$root/build-gpu}
device=${1:-cuda}
jobs=$(nproc 2>/dev/null || echo 4)

echo "== build ($build)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSLEAPC_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j "$jobs" --target sleapc_cli test_vulkan test_forward_reference \
  test_predict_reference test_vulkan_async bench_vulkan_overlap >/dev/null
sleapc="$build/sleapc"
"$sleapc" info --devices

echo "== tests on $device"
# fp16: the cases whose models keep fp16 (the multi-class ones amplify its
# rounding beyond the bound and run in float32; README "GPUs (Vulkan)").
fp16_cases=single_instance__small_robot_f0000,topdown__centered_pair_f0003
fp16_cases=$fp16_cases,centroid__centered_pair_f0000,bottomup__centered_pair_f0000
export SLEAPC_DATA_DIR="$data"
# test_vulkan needs the validation layer (vulkan-validationlayers).
if ls /usr/share/vulkan/explicit_layer.d/*validation* >/dev/null 2>&1 || [ -n "${VK_LAYER_PATH:-}" ]; then
  "$build/tests/test_vulkan" | tail -1
  "$build/tests/test_vulkan_async" | tail -1
else
  echo "test_vulkan: skipped (no Khronos validation layer here)"
fi
SLEAPC_BACKEND=vulkan SLEAPC_TEST_BACKEND=vulkan SLEAPC_TEST_FULL=1 \
  "$build/tests/test_forward_reference" | tail -2
SLEAPC_BACKEND=vulkan SLEAPC_TEST_BACKEND=vulkan SLEAPC_TEST_PRECISION=fp16 \
  SLEAPC_REFERENCE_CASES=$fp16_cases "$build/tests/test_forward_reference" | tail -2
SLEAPC_BACKEND=vulkan SLEAPC_TEST_BACKEND=vulkan SLEAPC_TEST_FULL=1 \
  "$build/tests/test_predict_reference" | tail -2

echo "== networks (random weights), batch 1, 8, 32: vulkan fp32/fp16 vs PyTorch CUDA eager"
py=${PYTHON:-python3}
if "$py" -c "import torch, yaml; assert torch.cuda.is_available()" 2>/dev/null; then
  "$py" "$root/bench/gpu/torch_compare.py" "$sleapc" "$data"/bench_configs/*.yaml \
    --batch 1,8,32 --runs 20
else
  echo "torch_compare: skipped (no PyTorch with CUDA for $py); vulkan alone:"
  for cfg in "$data"/bench_configs/*.yaml; do
    "$sleapc" bench --config "$cfg" --random-weights --backend vulkan --precision fp32,fp16 \
      --batch 1,8,32 --runs 20
  done
fi
echo "== networks on the CPU (native), batch 1, 8, 32"
for cfg in "$data"/bench_configs/*.yaml; do
  echo "-- $(basename "$cfg")"
  "$sleapc" bench --config "$cfg" --random-weights --backend native --batch 1,8,32 --runs 10
done

echo "== two batches in flight (submit/collect) against forward, host peaks as the host's work"
"$build/bench/bench_vulkan_overlap" "$data/sleap-nn-assets/model_ckpts/minimal_instance_bottomup" \
  --device "$device" --batch 8 --size 384 --batches 30 --host-reps 4

echo "== predict end to end ($device)"
models="$data/sleap-nn-assets/model_ckpts"
video="$data/sleap-nn-assets/datasets/centered_pair_small.mp4"
out=$(mktemp -d)
for dev in "$device" cpu; do
  "$sleapc" predict -m "$models/minimal_instance_centroid" \
    -m "$models/minimal_instance_centered_instance" -i "$video" --device "$dev" \
    -o "$out/topdown_$dev.slp" -q
  "$sleapc" predict -m "$models/minimal_instance_bottomup" -i "$video" --device "$dev" \
    -o "$out/bottomup_$dev.slp" -q
done
# fp16 on the GPU: the provenance says what ran (fp16, or float32 after the
# first-batch check).
"$sleapc" predict -m "$models/minimal_instance_bottomup" -i "$video" --device "$device" \
  --precision fp16 -o "$out/bottomup_fp16.slp" -q
grep -ao '"precision": "[a-z0-9+-]*"' "$out/bottomup_fp16.slp" | head -1 || true
rm -rf "$out"
