# examples/tests.cmake: ctest runs of the examples, with small settings.
hookfuse_add_example_test(NAME example.linear_regression TARGET linear_regression
                          PASS_REGULAR_EXPRESSION "global_step: 1000\nW: 1\\.99[0-9]*\nb: 0\\.0[0-5]")
hookfuse_add_example_test(NAME example.custom_hook TARGET custom_hook ARGS --steps 40
                          PASS_REGULAR_EXPRESSION "40 steps recorded, session global step 40")
hookfuse_add_example_test(NAME example.fashion_mnist TARGET fashion_mnist
                          ARGS --max_steps 300 --batch_size 32
                          PASS_REGULAR_EXPRESSION "global_step: 300\n.*test_accuracy: 0\\.[6-9]")
hookfuse_add_example_test(NAME example.fashion_mnist_adam TARGET fashion_mnist
                          ARGS --optimizer adam --max_steps 300 --batch_size 32
                          PASS_REGULAR_EXPRESSION "optimizer: adam\n.*global_step: 300\n.*test_accuracy: 0\\.[7-9]")
# --progress off a terminal (ctest's pipe): Keras' progress lines every 100 steps and at the
# last step, with loss, accuracy and steps/sec (bar: int(30 * 100 / 300) = 10 characters).
hookfuse_add_example_test(NAME example.fashion_mnist_progress TARGET fashion_mnist
                          ARGS --progress --max_steps 300 --batch_size 32
                          PASS_REGULAR_EXPRESSION "100/300 \\[=========>\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\] - ETA: [0-9:]+s? - [0-9.]+ steps/sec - loss: [0-9.]+ - accuracy: 0\\.[0-9]+\n200/300 \\[===================>\\.\\.\\.\\.\\.\\.\\.\\.\\.\\.\\] - ETA: [0-9:]+s? - [0-9.]+ steps/sec - loss: [0-9.]+ - accuracy: 0\\.[0-9]+\n300/300 \\[==============================\\] - [0-9]+s [0-9]+(s|ms|us)/step - [0-9.]+ steps/sec - loss: [0-9.]+ - accuracy: 0\\.[0-9]+\n")
# event_dump on TensorFlow 2's scalar fixture: the last of its 100 scalars, as CSV.
if(EXISTS "${HOOKFUSE_FIXTURES_DIR}/tf/events_tf2_scalar")
  hookfuse_add_example_test(NAME example.event_dump TARGET event_dump
                            ARGS --csv "${HOOKFUSE_FIXTURES_DIR}/tf/events_tf2_scalar"
                            PASS_REGULAR_EXPRESSION "tag,step,wall_time,value\nmy_metric,0,1585499054\\.[0-9]+,0\n.*my_metric,99,1585499054\\.[0-9]+,49\\.5\n")
endif()
# Checkpoints: a run to 120 with --model_dir, a resumed run to 250, an uninterrupted one
# (examples/fashion_mnist/resume_test.sh; skipped without the Fashion-MNIST files).
if(HOOKFUSE_BUILD_TESTS)
  add_test(NAME example.fashion_mnist_resume
    COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/fashion_mnist/resume_test.sh"
      "$<TARGET_FILE:fashion_mnist>" "${CMAKE_CURRENT_BINARY_DIR}/fashion_mnist_resume")
  set_tests_properties(example.fashion_mnist_resume PROPERTIES LABELS example
                       SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
# Summaries: --model_dir D --max_steps 1000 leaves one event file with loss and accuracy at
# steps 1, 101, ..., 901 and global_step/sec at 101, ..., 901, and scripts/plot_scalars.py turns
# D into a PNG (examples/fashion_mnist/summaries_test.sh; skipped without Fashion-MNIST).
if(HOOKFUSE_BUILD_TESTS)
  find_program(HOOKFUSE_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  find_program(HOOKFUSE_PYTHON3 NAMES python3)
  set(_hookfuse_python3 "")
  if(HOOKFUSE_PYTHON3)
    set(_hookfuse_python3 "${HOOKFUSE_PYTHON3}")
  endif()
  add_test(NAME example.fashion_mnist_summaries
    COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/fashion_mnist/summaries_test.sh"
      "$<TARGET_FILE:fashion_mnist>" "$<TARGET_FILE:event_dump>"
      "${PROJECT_SOURCE_DIR}/scripts/plot_scalars.py" "${_hookfuse_python3}"
      "${CMAKE_CURRENT_BINARY_DIR}/fashion_mnist_summaries")
  set_tests_properties(example.fashion_mnist_summaries PROPERTIES LABELS example
                       SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
# An error in a hook's end() (the final checkpoint cannot be written) makes the example exit 1
# with one line (examples/fashion_mnist/end_error_test.sh; skipped without Fashion-MNIST).
if(HOOKFUSE_BUILD_TESTS)
  add_test(NAME example.fashion_mnist_end_error
    COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/fashion_mnist/end_error_test.sh"
      "$<TARGET_FILE:fashion_mnist>" "${CMAKE_CURRENT_BINARY_DIR}/fashion_mnist_end_error")
  set_tests_properties(example.fashion_mnist_end_error PROPERTIES LABELS example
                       SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
# Bad flags (NaN, infinities, 0, negative, huge, text for every numeric flag) and bad data
# directories built from small hand-made IDX files (missing, empty, truncated, wrong magic,
# labels >= 10, 27x28 images, zero records, count mismatches): each exits non-zero without a
# signal, with one "fashion_mnist: ..." line naming the flag or file
# (examples/fashion_mnist/bad_input_test.sh; needs no Fashion-MNIST files).
if(HOOKFUSE_BUILD_TESTS)
  add_test(NAME example.fashion_mnist_bad_input
    COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/fashion_mnist/bad_input_test.sh"
      "$<TARGET_FILE:fashion_mnist>" "${CMAKE_CURRENT_BINARY_DIR}/fashion_mnist_bad_input")
  set_tests_properties(example.fashion_mnist_bad_input PROPERTIES LABELS example TIMEOUT 300)
endif()
# --lr_schedule cosine: cosine_decay(0.1, 300, alpha 0.01) ends at 0.1 * (0.99 * 0.5 * (1 +
# cos(pi * 299 / 300)) + 0.01) = 0.0010027 for the last step (global step 299).
hookfuse_add_example_test(NAME example.fashion_mnist_cosine TARGET fashion_mnist
                          ARGS --lr_schedule cosine --max_steps 300 --batch_size 32
                          PASS_REGULAR_EXPRESSION "lr_schedule: cosine\n.*global_step: 300\nfinal_learning_rate: 0\\.0010027[0-9]*\n.*test_accuracy: 0\\.[6-9]")
# Data-parallel: `mpirun -np 2 fashion_mnist_mpi` and one fashion_mnist process, 200 steps at
# global batch 32, end with the same variables (relative 1e-5; tests/io/checkpoint_compare.cpp)
# (examples/fashion_mnist/mpi_test.sh; skipped without MPI or the Fashion-MNIST files). The
# timeout turns a hang (a rank waiting in a collective) into a failure.
if(HOOKFUSE_BUILD_TESTS AND TARGET fashion_mnist)
  if(TARGET fashion_mnist_mpi)
    add_executable(checkpoint_compare "${PROJECT_SOURCE_DIR}/tests/io/checkpoint_compare.cpp")
    target_link_libraries(checkpoint_compare PRIVATE hookfuse::hookfuse hookfuse_warnings)
    set_target_properties(checkpoint_compare PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                          "${CMAKE_CURRENT_BINARY_DIR}")
    add_test(NAME example.fashion_mnist_mpi
      COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/fashion_mnist/mpi_test.sh" "${MPIEXEC_EXECUTABLE}"
        "$<TARGET_FILE:fashion_mnist_mpi>" "$<TARGET_FILE:fashion_mnist>"
        "$<TARGET_FILE:checkpoint_compare>" "${CMAKE_CURRENT_BINARY_DIR}/fashion_mnist_mpi_run")
  else()
    add_test(NAME example.fashion_mnist_mpi
      COMMAND sh -c "echo 'SKIPPED: example.fashion_mnist_mpi: no fashion_mnist_mpi (MPI not found: Debian libopenmpi-dev openmpi-bin, scripts/install-deps.sh; or the sanitizer build)'; exit 77")
  endif()
  set_tests_properties(example.fashion_mnist_mpi PROPERTIES LABELS "example;mpi"
                       SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
# Adam against scripts/fashion_mnist_numpy_reference.py, the same training in plain numpy drawing
# the same weights and batches: 300 steps of seed 7 give the same test loss and accuracy
# (examples/fashion_mnist/numpy_reference_test.sh; skipped without Fashion-MNIST or numpy).
if(HOOKFUSE_BUILD_TESTS)
  add_test(NAME example.fashion_mnist_numpy_reference
    COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/fashion_mnist/numpy_reference_test.sh"
      "$<TARGET_FILE:fashion_mnist>" "${_hookfuse_python3}"
      "${PROJECT_SOURCE_DIR}/scripts/fashion_mnist_numpy_reference.py"
      "${CMAKE_CURRENT_BINARY_DIR}/fashion_mnist_numpy_reference")
  set_tests_properties(example.fashion_mnist_numpy_reference PROPERTIES LABELS example
                       SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
# The Estimator example twice into one model_dir (removed first): evaluations at steps 100 and
# 200, then 300 and 400 (a restart continues from the checkpoint); model_dir/eval holds one event
# file, read back by scripts/plot_scalars.py --dump (tests/scripts/estimator_eval_events.sh).
if(HOOKFUSE_BUILD_TESTS AND TARGET estimator_regression)  # not in the sanitizer build
  find_program(HOOKFUSE_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  find_program(HOOKFUSE_PYTHON3 NAMES python3)
  if(NOT HOOKFUSE_PYTHON3)
    set(HOOKFUSE_PYTHON3 "")
  endif()
  add_test(NAME example.estimator_regression
    COMMAND sh "${PROJECT_SOURCE_DIR}/tests/scripts/estimator_eval_events.sh"
      "$<TARGET_FILE:estimator_regression>" "${HOOKFUSE_PYTHON3}"
      "${PROJECT_SOURCE_DIR}/scripts/plot_scalars.py"
      "${CMAKE_CURRENT_BINARY_DIR}/estimator_regression_run")
  set_tests_properties(example.estimator_regression PROPERTIES LABELS example SKIP_RETURN_CODE 77)
endif()
# train_and_evaluate with five TrainSpec hooks at the TF program's settings (1000 steps), into a
# fresh --dir: W and b near 2 and 0, global_step/sec at every step and loss every 10 steps in
# logs/, the five newest of the checkpoints saved every 100 steps in checkpoints/, all read back
# by hookfuse's readers (examples/estimator_linear_regression/outputs_test.sh;
# tests/io/checkpoint_dump.cpp prints what io::get_checkpoint_state and io::CheckpointReader read).
if(HOOKFUSE_BUILD_TESTS AND TARGET estimator_linear_regression)  # not in the sanitizer build
  if(NOT TARGET checkpoint_dump)
    add_executable(checkpoint_dump "${PROJECT_SOURCE_DIR}/tests/io/checkpoint_dump.cpp")
    target_link_libraries(checkpoint_dump PRIVATE hookfuse::hookfuse hookfuse_warnings)
    set_target_properties(checkpoint_dump PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                     "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  add_test(NAME example.estimator_linear_regression
    COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/estimator_linear_regression/outputs_test.sh"
      "$<TARGET_FILE:estimator_linear_regression>" "$<TARGET_FILE:event_dump>"
      "$<TARGET_FILE:checkpoint_dump>" "${CMAKE_CURRENT_BINARY_DIR}/estimator_linear_regression_run")
  set_tests_properties(example.estimator_linear_regression PROPERTIES LABELS example TIMEOUT 300)
endif()
# A user hook under a caller-fed MonitoredTrainingSession, 100 runs: its losses (the first 30,
# none rising, the last as computed by hand), the checkpoint its end() saves (read back at step
# 100) and the caller's fetches it saw in before_run, plain and with --fetch_loss
# (examples/monitored_session_hook/outputs_test.sh).
if(HOOKFUSE_BUILD_TESTS AND TARGET monitored_session_hook)  # not in the sanitizer build
  add_test(NAME example.monitored_session_hook
    COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/monitored_session_hook/outputs_test.sh"
      "$<TARGET_FILE:monitored_session_hook>" "$<TARGET_FILE:checkpoint_dump>"
      "${CMAKE_CURRENT_BINARY_DIR}/monitored_session_hook_run")
  set_tests_properties(example.monitored_session_hook PROPERTIES LABELS example TIMEOUT 120)
endif()
# The MLP Estimator program on its own random data, 150 steps per run with the whole set (1000)
# as the batch: the warm-started run's first logged train_accuracy equals the first run's
# evaluate accuracy and exceeds chance; the train_accuracy summaries in the event file; the error
# without a checkpoint to warm-start from and for bad flags (examples/estimator_mlp/outputs_test.sh).
if(HOOKFUSE_BUILD_TESTS)
  add_test(NAME example.estimator_mlp
    COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/estimator_mlp/outputs_test.sh"
      "$<TARGET_FILE:estimator_mlp>" "$<TARGET_FILE:event_dump>"
      "${CMAKE_CURRENT_BINARY_DIR}/estimator_mlp_run")
  set_tests_properties(example.estimator_mlp PROPERTIES LABELS example TIMEOUT 300)
endif()
# At the TF program's settings (10000 steps per run, batch 100) on Fashion-MNIST with
# --kernel_init glorot: test accuracy >= 0.86 (examples/estimator_mlp/fashion_mnist_test.sh;
# skipped without the Fashion-MNIST files). Not in the sanitizer build: 20000 instrumented steps
# at -O1 take minutes, and example.estimator_mlp runs the same code there.
if(HOOKFUSE_BUILD_TESTS AND NOT HOOKFUSE_SANITIZE)
  add_test(NAME example.estimator_mlp_fashion_mnist
    COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/estimator_mlp/fashion_mnist_test.sh"
      "$<TARGET_FILE:estimator_mlp>" /usr/share/datasets/fashion-mnist
      "${CMAKE_CURRENT_BINARY_DIR}/estimator_mlp_fashion_mnist")
  set_tests_properties(example.estimator_mlp_fashion_mnist PROPERTIES LABELS example
                       SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
