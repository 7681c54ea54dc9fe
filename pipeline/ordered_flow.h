// The decode flow graph both formats use: a serial producer of tasks (input_node), a bound on
// tasks in flight (limiter_node), parallel decoding (unlimited function_node), file order
// restored (sequencer_node), and a serial consumer that sees results in task order.
//   next()          -> std::optional<Task>; std::nullopt ends the stream (called serially)
//   decode(task)    -> Result (called in parallel)
//   collect(task, result) in the order next() produced them (called serially)
// An exception from any of them cancels the graph and is rethrown here.
#pragma once

#include <oneapi/tbb/flow_graph.h>

#include <cstdint>
#include <memory>
#include <optional>

namespace heapgraph {

template <typename Task, typename Result, typename Next, typename Decode, typename Collect>
void run_ordered_flow(Next next, Decode decode, Collect collect, std::size_t in_flight) {
    namespace flow = tbb::flow;
    struct Message {  // messages are copied between nodes: share the payloads
        std::uint64_t sequence = 0;
        std::shared_ptr<Task> task;
        std::shared_ptr<Result> result;
    };
    std::uint64_t sequence = 0;
    flow::graph g;
    flow::input_node<Message> reader(g, [&](tbb::flow_control& control) {
        std::optional<Task> task = next();
        if (!task) {
            control.stop();
            return Message{};
        }
        return Message{sequence++, std::make_shared<Task>(std::move(*task)), nullptr};
    });
    flow::limiter_node<Message> limiter(g, in_flight);
    flow::function_node<Message, Message> work(g, flow::unlimited, [&](Message m) {
        m.result = std::make_shared<Result>(decode(*m.task));
        return m;
    });
    flow::sequencer_node<Message> in_order(g, [](const Message& m) { return m.sequence; });
    flow::function_node<Message, flow::continue_msg> sink(g, flow::serial, [&](const Message& m) {
        collect(*m.task, *m.result);
        return flow::continue_msg();
    });
    flow::make_edge(reader, limiter);
    flow::make_edge(limiter, work);
    flow::make_edge(work, in_order);
    flow::make_edge(in_order, sink);
    flow::make_edge(sink, limiter.decrementer());
    reader.activate();
    g.wait_for_all();
}

}  // namespace heapgraph
