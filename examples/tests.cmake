# examples/tests.cmake: ctest runs of the examples, with small settings.
hookfuse_add_example_test(NAME example.linear_regression TARGET linear_regression
                          PASS_REGULAR_EXPRESSION "global_step: 1000\nW: 1\\.99[0-9]*\nb: 0\\.0[0-5]")
hookfuse_add_example_test(NAME example.custom_hook TARGET custom_hook ARGS --steps 40
                          PASS_REGULAR_EXPRESSION "40 steps recorded, session global step 40")
hookfuse_add_example_test(NAME example.fashion_mnist TARGET fashion_mnist
                          ARGS --max_steps 300 --batch_size 32
                          PASS_REGULAR_EXPRESSION "global_step: 300\n.*test_accuracy: 0\\.[6-9]")
# event_dump on TensorFlow 2's scalar fixture: the last of its 100 scalars, as CSV.
if(EXISTS "${HOOKFUSE_FIXTURES_DIR}/tf/events_tf2_scalar")
  hookfuse_add_example_test(NAME example.event_dump TARGET event_dump
                            ARGS --csv "${HOOKFUSE_FIXTURES_DIR}/tf/events_tf2_scalar"
                            PASS_REGULAR_EXPRESSION "tag,step,wall_time,value\nmy_metric,0,1585499054\\.[0-9]+,0\n.*my_metric,99,1585499054\\.[0-9]+,49\\.5\n")
endif()
