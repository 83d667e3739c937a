/*
 * An observer inside a real Artemis broker: what the broker decided about each message brokerspec sent.
 *
 * Theory of operation
 * -------------------
 * A client is not told everything the spec speaks of: Artemis answers a duplicate send outside a
 * transaction as if it had succeeded (its RoutingStatus is DUPLICATED_ID, but no protocol passes that
 * on), and a transaction learns it is rollback-only only when its commit fails. This broker plugin
 * (ActiveMQServerPlugin, a documented extension point configured under <broker-plugins>) only
 * watches: for every message that carries brokerspec's tag property it appends one JSON line to a
 * file, and it changes nothing.
 *
 *   route  after the bindings were consulted (the queues the message was routed to, in or outside a
 *          transaction); Artemis calls it for every message that passed the duplicate check
 *   send   after the session's send returned: the RoutingStatus and the state of the session's
 *          transaction (ACTIVE, ROLLBACK_ONLY, ROLLEDBACK ...)
 *   error  a send that threw, with the exception's class
 *
 * Three questions can be asked of it, each by a message that carries the property _BS_PROBE and never
 * goes further (the plugin answers, then refuses the send with an ActiveMQException, which leaves the
 * session's transaction as it was). An answer that failed (for instance a queue browsed while a
 * redistribution empties it) carries the exception under "error" instead, and the adapter asks again:
 *
 *   tx      the state of the sending session's transaction, without ending it
 *   caches  every duplicate-ID cache of the post office, with its IDs in slot order (read through
 *           reflection from PostOfficeImpl.duplicateIDCaches, the map every release keeps them in), and
 *           under "live" the IDs each cache's duplicate check finds (DuplicateIDCache.contains): a slot can
 *           outlive its ID there, when an ID written twice has one of its two slots overwritten
 *           (addToCacheInMemory removes the overwritten ID from the lookup map whatever other slot holds it)
 *   state   the node's view of the cluster for the load-balancing adapter: its node ID and, for every
 *           address outside the broker's own, each binding in the post office's order: a local queue
 *           with its consumer count, its message and delivering counts and the tags of the messages
 *           waiting in it (browsed in queue order), or a remote binding with the consumer count its
 *           node was told of (RemoteQueueBindingImpl.toString, the one place 2.11 shows it), whether it
 *           is connected, and the messages still in its store-and-forward queue
 *
 * The same source compiles against every Artemis release brokerspec runs (2.11 to 2.40): it uses only
 * the plugin methods and RoutingContext calls those releases share.
 */

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import java.lang.reflect.Field;
import java.util.Iterator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.activemq.artemis.api.core.ActiveMQException;
import org.apache.activemq.artemis.api.core.ActiveMQExceptionType;
import org.apache.activemq.artemis.api.core.Pair;
import org.apache.activemq.artemis.api.core.Message;
import org.apache.activemq.artemis.api.core.SimpleString;
import org.apache.activemq.artemis.core.postoffice.Binding;
import org.apache.activemq.artemis.core.postoffice.Bindings;
import org.apache.activemq.artemis.core.postoffice.DuplicateIDCache;
import org.apache.activemq.artemis.core.postoffice.RoutingStatus;
import org.apache.activemq.artemis.core.server.ActiveMQServer;
import org.apache.activemq.artemis.core.server.MessageReference;
import org.apache.activemq.artemis.core.server.Queue;
import org.apache.activemq.artemis.core.server.RouteContextList;
import org.apache.activemq.artemis.core.server.RoutingContext;
import org.apache.activemq.artemis.core.server.cluster.RemoteQueueBinding;
import org.apache.activemq.artemis.core.server.ServerSession;
import org.apache.activemq.artemis.core.server.plugin.ActiveMQServerPlugin;
import org.apache.activemq.artemis.core.transaction.Transaction;

public final class BrokerspecProbe implements ActiveMQServerPlugin {

   /** The property brokerspec puts on every message it sends; its value names the message. */
   public static final SimpleString TAG = SimpleString.toSimpleString("_BS_TAG");

   /** The property of a question to the probe: "tx", "caches" or "state". */
   public static final SimpleString QUESTION = SimpleString.toSimpleString("_BS_PROBE");

   private Writer out;
   private ActiveMQServer server;

   @Override
   public void registered(ActiveMQServer server) {
      this.server = server;
   }

   @Override
   public void init(Map<String, String> properties) {
      String file = properties.get("file");
      try {
         out = new OutputStreamWriter(new FileOutputStream(file, true), StandardCharsets.UTF_8);
      } catch (IOException e) {
         throw new IllegalStateException("the brokerspec probe cannot open " + file, e);
      }
   }

   private static String tag(Message message) {
      Object value = message.getObjectProperty(TAG);
      return value == null ? null : value.toString();
   }

   private synchronized void write(String line) {
      try {
         out.write(line);
         out.write('\n');
         out.flush();
      } catch (IOException e) {
         throw new IllegalStateException("the brokerspec probe cannot write", e);
      }
   }

   private static String quote(String text) {
      StringBuilder out = new StringBuilder("\"");
      for (int i = 0; i < text.length(); i++) {
         char c = text.charAt(i);
         if (c == '"' || c == '\\') {
            out.append('\\').append(c);
         } else if (c < 0x20 || c > 0x7e) {
            out.append(String.format("\\u%04x", (int) c));
         } else {
            out.append(c);
         }
      }
      return out.append('"').toString();
   }

   @Override
   public void afterMessageRoute(Message message, RoutingContext context, boolean direct, boolean rejectDuplicates,
                                 RoutingStatus result) throws ActiveMQException {
      record("route", message, context, result);
   }

   @Override
   public void beforeMessageRoute(Message message, RoutingContext context, boolean direct, boolean rejectDuplicates)
      throws ActiveMQException {
      // 2.11 calls this after the bindings were consulted and before the queues are written; later releases
      // call it before routing. The route record above is the one that counts; this one shows the order.
   }

   private void record(String event, Message message, RoutingContext context, RoutingStatus result) {
      String tag = tag(message);
      if (tag == null) {
         return;
      }
      StringBuilder queues = new StringBuilder("[");
      boolean first = true;
      for (Map.Entry<SimpleString, RouteContextList> entry : context.getContexListing().entrySet()) {
         for (Queue queue : entry.getValue().getDurableQueues()) {
            queues.append(first ? "" : ",").append(quote(queue.getName().toString()));
            first = false;
         }
         for (Queue queue : entry.getValue().getNonDurableQueues()) {
            queues.append(first ? "" : ",").append(quote(queue.getName().toString()));
            first = false;
         }
      }
      queues.append(']');
      Transaction tx = context.getTransaction();
      write("{\"event\":" + quote(event) + ",\"tag\":" + quote(tag) + ",\"address\":"
               + quote(String.valueOf(context.getAddress())) + ",\"status\":" + quote(String.valueOf(result))
               + ",\"queues\":" + queues + ",\"tx\":" + (tx == null ? "null" : quote(tx.getState().name())) + "}");
   }

   @Override
   public void beforeSend(ServerSession session, Transaction tx, Message message, boolean direct,
                          boolean noAutoCreateQueue) throws ActiveMQException {
      Object question = message.getObjectProperty(QUESTION);
      if (question == null) {
         return;
      }
      String asked = question.toString();
      String tag = quote(String.valueOf(tag(message)));
      String answer;
      try {
         answer = answer(asked, tx);
      } catch (RuntimeException e) {
         // The broker logs and swallows a plugin's exception unless it is an ActiveMQException
         // (ActiveMQServerImpl.callBrokerPlugins), and the question would then go on as a plain message,
         // leaving no answer at all: a failed answer (a queue browsed while the cluster moves its messages)
         // is written as one, for the adapter to ask again.
         answer = ",\"error\":" + quote(String.valueOf(e));
      }
      try {
         write("{\"event\":" + quote(asked) + ",\"tag\":" + tag + answer + "}");
      } catch (RuntimeException e) {
         throw new ActiveMQException(ActiveMQExceptionType.GENERIC_EXCEPTION,
                                     "brokerspec probe could not write its answer to " + asked + ": " + e);
      }
      throw new ActiveMQException(ActiveMQExceptionType.GENERIC_EXCEPTION, "brokerspec probe answered " + asked);
   }

   /** The fields of the answer to {@code question} after the event and the tag, each led by a comma. */
   private String answer(String question, Transaction tx) {
      switch (question) {
         case "tx":
            return ",\"tx\":" + (tx == null ? "null" : quote(tx.getState().name()));
         case "caches":
            return ",\"caches\":" + caches(false) + ",\"live\":" + caches(true);
         case "state":
            return ",\"node_id\":" + quote(String.valueOf(server.getNodeID())) + ",\"bindings\":" + bindings();
         default:
            return ",\"error\":" + quote("no such question");
      }
   }

   /** Every cache's IDs in slot order; with {@code live}, only those its duplicate check finds, each once. */
   @SuppressWarnings("unchecked")
   private String caches(boolean live) {
      Map<SimpleString, DuplicateIDCache> all;
      try {
         Object postOffice = server.getPostOffice();
         Field field = postOffice.getClass().getDeclaredField("duplicateIDCaches");
         field.setAccessible(true);
         all = (Map<SimpleString, DuplicateIDCache>) field.get(postOffice);
      } catch (ReflectiveOperationException e) {
         return quote("unreadable: " + e);
      }
      StringBuilder out = new StringBuilder("{");
      boolean first = true;
      for (Map.Entry<SimpleString, DuplicateIDCache> entry : all.entrySet()) {
         out.append(first ? "" : ",").append(quote(entry.getKey().toString())).append(":[");
         first = false;
         boolean firstId = true;
         List<Pair<byte[], Long>> ids = entry.getValue().getMap();
         java.util.Set<String> written = new java.util.HashSet<>();
         for (Pair<byte[], Long> id : ids) {
            if (id == null || id.getA() == null) {
               continue;
            }
            if (live && (!entry.getValue().contains(id.getA()) || !written.add(java.util.Arrays.toString(id.getA())))) {
               continue;
            }
            out.append(firstId ? "" : ",").append('"');
            firstId = false;
            for (byte b : id.getA()) {
               out.append(String.format("%02x", b & 0xff));
            }
            out.append('"');
         }
         out.append(']');
      }
      return out.append('}').toString();
   }

   @Override
   public void afterSend(ServerSession session, Transaction tx, Message message, boolean direct,
                         boolean noAutoCreateQueue, RoutingStatus result) throws ActiveMQException {
      String tag = tag(message);
      if (tag == null) {
         return;
      }
      write("{\"event\":\"send\",\"tag\":" + quote(tag) + ",\"status\":" + quote(String.valueOf(result))
               + ",\"tx\":" + (tx == null ? "null" : quote(tx.getState().name())) + "}");
   }

   @Override
   public void onSendException(ServerSession session, Transaction tx, Message message, boolean direct,
                               boolean noAutoCreateQueue, Exception e) throws ActiveMQException {
      String tag = tag(message);
      if (tag == null) {
         return;
      }
      write("{\"event\":\"error\",\"tag\":" + quote(tag) + ",\"error\":" + quote(e.getClass().getName())
               + ",\"tx\":" + (tx == null ? "null" : quote(tx.getState().name())) + "}");
   }

   private static final Pattern CONSUMER_COUNT = Pattern.compile("consumerCount=(\\d+)");

   /** Every binding of every address that is not the broker's own, as a JSON array (the "state" answer). */
   private String bindings() {
      StringBuilder out = new StringBuilder("[");
      boolean first = true;
      for (SimpleString address : server.getPostOffice().getAddresses()) {
         String name = address.toString();
         if (name.startsWith("activemq.") || name.startsWith("$.") || name.startsWith("$bs.")) {
            continue;
         }
         Bindings bindings;
         try {
            bindings = server.getPostOffice().lookupBindingsForAddress(address);
         } catch (Exception e) {
            continue;
         }
         if (bindings == null) {
            continue;
         }
         for (Binding binding : bindings.getBindings()) {
            out.append(first ? "" : ",").append(describe(name, binding));
            first = false;
         }
      }
      return out.append(']').toString();
   }

   private static String describe(String address, Binding binding) {
      StringBuilder out = new StringBuilder("{\"address\":").append(quote(address))
         .append(",\"name\":").append(quote(binding.getUniqueName().toString()))
         .append(",\"routing\":").append(quote(binding.getRoutingName().toString()));
      if (binding instanceof RemoteQueueBinding) {
         RemoteQueueBinding remote = (RemoteQueueBinding) binding;
         Matcher count = CONSUMER_COUNT.matcher(remote.toString());
         out.append(",\"kind\":\"remote\",\"consumers\":").append(count.find() ? count.group(1) : "-1")
            .append(",\"connected\":").append(remote.isConnected())
            .append(",\"sf\":").append(remote.getQueue().getMessageCount());
      } else if (binding.getBindable() instanceof Queue) {
         Queue queue = (Queue) binding.getBindable();
         out.append(",\"kind\":\"local\",\"consumers\":").append(queue.getConsumerCount())
            .append(",\"messages\":").append(queue.getMessageCount())
            .append(",\"delivering\":").append(queue.getDeliveringCount())
            .append(",\"tags\":[");
         Iterator<MessageReference> refs = queue.browserIterator();
         boolean first = true;
         try {
            while (refs.hasNext()) {
               out.append(first ? "" : ",").append(quote(String.valueOf(tag(refs.next().getMessage()))));
               first = false;
            }
         } finally {
            if (refs instanceof AutoCloseable) {
               try {
                  ((AutoCloseable) refs).close();
               } catch (Exception ignored) {
                  // a browser that cannot close has nothing left to say
               }
            }
         }
         out.append(']');
      } else {
         out.append(",\"kind\":").append(quote(binding.getClass().getSimpleName()));
      }
      return out.append('}').toString();
   }
}
