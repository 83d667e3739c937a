/*
 * The client side of brokerspec's Artemis adapter: a thin executor of client calls.
 *
 * Theory of operation
 * -------------------
 * brokerspec's Python adapter decides what each spec operation means on a real broker; this program
 * only carries out the client calls it asks for, through Artemis's own client libraries as shipped in
 * the broker's distribution (the core client, the core JMS client and Qpid JMS for AMQP), compiled
 * against the very release it talks to. One request per line on standard input, one reply per line on
 * standard output, both JSON objects:
 *
 *   {"cmd": "send", "session": "s1", "address": "a1", "properties": {...}}   ->   {"ok": true}
 *   a call that throws                                                        ->   {"ok": false, "error": {...}}
 *
 * An error names the exception's class, Artemis's exception type (ActiveMQExceptionType) when there is
 * one, the XA error code of an XAException, and the message, for the exception and each cause, so the
 * adapter can tell a missing queue from a duplicate ID without parsing text.
 *
 * A session made with "xa": true is an XA session (ClientSessionFactory.createSession with xa true, no
 * auto-commit, every acknowledgement sent at once); the xa_* commands drive its XAResource side, each naming
 * the branch by an xid given as {"format": N, "gtrid": HEX, "bqual": HEX}, which may come from an earlier
 * session or an earlier broker process: after a restart a new session ends a prepared branch by its xid.
 *
 * The requests and replies are small, flat JSON; the distribution's JSON library differs between
 * releases (javax.json in 2.11, a shaded copy later), so a minimal reader and writer live here.
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.Arrays;

import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import javax.jms.Connection;
import javax.jms.ConnectionFactory;
import javax.jms.Destination;
import javax.jms.JMSException;
import javax.jms.MessageConsumer;

import org.apache.activemq.artemis.api.core.ActiveMQException;
import org.apache.activemq.artemis.api.core.RoutingType;
import org.apache.activemq.artemis.api.core.SimpleString;
import org.apache.activemq.artemis.api.core.client.ActiveMQClient;
import org.apache.activemq.artemis.api.core.client.ClientConsumer;
import org.apache.activemq.artemis.api.core.client.ClientMessage;
import org.apache.activemq.artemis.api.core.client.ClientProducer;
import org.apache.activemq.artemis.api.core.client.ClientRequestor;
import org.apache.activemq.artemis.api.core.client.ClientSession;
import org.apache.activemq.artemis.api.core.client.ClientSessionFactory;
import org.apache.activemq.artemis.api.core.client.ServerLocator;
import org.apache.activemq.artemis.api.core.management.ManagementHelper;

public final class BrokerspecDriver {

   /** One broker node: its URL, the core session factory and a session kept for management and queries. */
   private static final class Node {
      final String url;
      final ServerLocator locator;
      final ClientSessionFactory factory;
      final ClientSession admin;
      final ClientRequestor requestor;

      Node(String url) throws Exception {
         this.url = url;
         locator = ActiveMQClient.createServerLocator(url);
         locator.setBlockOnDurableSend(true).setBlockOnNonDurableSend(true).setBlockOnAcknowledge(true);
         locator.setCallTimeout(8000).setReconnectAttempts(0).setConsumerWindowSize(0);
         factory = locator.createSessionFactory();
         admin = factory.createSession(false, true, true);
         admin.start();
         requestor = new ClientRequestor(admin, "activemq.management");
      }

      void close() {
         quietly(requestor::close);
         quietly(admin::close);
         quietly(factory::close);
         quietly(locator::close);
      }
   }

   private interface Closer {
      void close() throws Exception;
   }

   private static void quietly(Closer closer) {
      try {
         closer.close();
      } catch (Exception ignored) {
         // closing what may already be gone: nothing to report
      }
   }

   private final Map<String, Node> nodes = new LinkedHashMap<>();
   private final Map<String, ClientSession> sessions = new LinkedHashMap<>();
   private final Map<String, String> sessionNode = new LinkedHashMap<>();
   private final Map<String, ClientConsumer> consumers = new LinkedHashMap<>();
   private final Map<String, String> consumerSession = new LinkedHashMap<>();
   /** The consumers that acknowledge later: what they take they hold until an "ack" names it. */
   private final Map<String, Boolean> manualAck = new LinkedHashMap<>();
   /** Per consumer, the last copy it was delivered of each tagged message, so that an "ack" can acknowledge it. */
   private final Map<String, Map<String, ClientMessage>> delivered = new java.util.concurrent.ConcurrentHashMap<>();
   private final Map<String, Connection> jmsConnections = new LinkedHashMap<>();
   private final Map<String, MessageConsumer> jmsConsumers = new LinkedHashMap<>();
   private final ConcurrentLinkedQueue<Map<String, Object>> deliveries = new ConcurrentLinkedQueue<>();

   public static void main(String[] args) throws Exception {
      BrokerspecDriver driver = new BrokerspecDriver();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      PrintStream out = new PrintStream(System.out, true, "UTF-8");
      System.setOut(System.err); // library chatter never reaches the reply channel
      String line;
      while ((line = in.readLine()) != null) {
         if (line.isBlank()) {
            continue;
         }
         Map<String, Object> reply;
         try {
            Map<String, Object> request = Json.object(Json.parse(line));
            if ("bye".equals(request.get("cmd"))) {
               driver.closeAll();
               out.println(Json.write(Map.of("ok", true)));
               break;
            }
            reply = driver.handle(request);
         } catch (Throwable error) {
            reply = failure(error);
         }
         out.println(Json.write(reply));
      }
      driver.closeAll();
      System.exit(0);
   }

   private static Map<String, Object> ok() {
      Map<String, Object> reply = new LinkedHashMap<>();
      reply.put("ok", true);
      return reply;
   }

   /** A failed call: every exception in the cause chain with its class, Artemis type and message. */
   static Map<String, Object> failure(Throwable error) {
      List<Object> chain = new ArrayList<>();
      for (Throwable t = error; t != null && chain.size() < 8; t = t.getCause()) {
         Map<String, Object> item = new LinkedHashMap<>();
         item.put("class", t.getClass().getName());
         item.put("message", String.valueOf(t.getMessage()));
         if (t instanceof ActiveMQException) {
            item.put("type", ((ActiveMQException) t).getType().name());
         }
         if (t instanceof XAException) {
            item.put("xa_code", (long) ((XAException) t).errorCode);
         }
         if (t instanceof JMSException && ((JMSException) t).getLinkedException() != null && t.getCause() == null) {
            t.initCause(((JMSException) t).getLinkedException());
         }
         chain.add(item);
      }
      Map<String, Object> reply = new LinkedHashMap<>();
      reply.put("ok", false);
      reply.put("error", chain);
      return reply;
   }

   private static String str(Map<String, Object> request, String key) {
      Object value = request.get(key);
      if (!(value instanceof String)) {
         throw new IllegalArgumentException("request field " + key + " must be a string, not " + value);
      }
      return (String) value;
   }

   private static String optStr(Map<String, Object> request, String key) {
      Object value = request.get(key);
      return value == null ? null : str(request, key);
   }

   private static boolean flag(Map<String, Object> request, String key, boolean otherwise) {
      Object value = request.get(key);
      return value == null ? otherwise : (Boolean) value;
   }

   private static SimpleString simple(String text) {
      return text == null ? null : SimpleString.toSimpleString(text);
   }

   private Node node(Map<String, Object> request) {
      String name = str(request, "node");
      Node node = nodes.get(name);
      if (node == null) {
         throw new IllegalArgumentException("no connection to node " + name);
      }
      return node;
   }

   private ClientSession session(Map<String, Object> request) {
      String id = str(request, "session");
      ClientSession session = sessions.get(id);
      if (session == null) {
         throw new IllegalArgumentException("no session " + id);
      }
      return session;
   }

   Map<String, Object> handle(Map<String, Object> request) throws Exception {
      String cmd = str(request, "cmd");
      switch (cmd) {
         case "connect": {
            String name = str(request, "node");
            Node old = nodes.remove(name);
            if (old != null) {
               old.close();
            }
            nodes.put(name, new Node(str(request, "url")));
            return ok();
         }
         case "disconnect":
            disconnect(str(request, "node"));
            return ok();
         case "manage":
            return manage(node(request), request);
         case "queue_query":
            return queueQuery(node(request).admin.queueQuery(simple(str(request, "name"))));
         case "delete_queue":
            node(request).admin.deleteQueue(simple(str(request, "name")));
            return ok();
         case "address_query":
            return addressQuery(node(request).admin.addressQuery(simple(str(request, "name"))));
         case "session": {
            String id = str(request, "id");
            boolean transacted = flag(request, "transacted", false);
            Node node = node(request);
            ClientSession session = flag(request, "xa", false)
               ? node.factory.createSession(null, null, true, false, false, false, 0)
               : node.factory.createSession(!transacted, !transacted, 0);
            session.start();
            sessions.put(id, session);
            sessionNode.put(id, str(request, "node"));
            return ok();
         }
         case "close_session":
            closeSession(str(request, "id"));
            return ok();
         case "sync":
            // a blocking round trip on the session's channel: every send it made before has been handled
            session(request).queueQuery(simple("$bs.sync"));
            return ok();
         case "stop_session":
            session(request).stop();
            return ok();
         case "start_session":
            session(request).start();
            return ok();
         case "create_queue": {
            ClientSession session = request.get("session") == null ? node(request).admin : session(request);
            session.createQueue(simple(str(request, "address")), RoutingType.valueOf(str(request, "routing_type")),
                                simple(str(request, "name")), simple(optStr(request, "filter")),
                                flag(request, "durable", true), flag(request, "auto_created", false));
            return ok();
         }
         case "send":
            return send(session(request), request);
         case "commit":
            session(request).commit();
            return ok();
         case "rollback":
            dropStaleForcedDeliveries(str(request, "session"));
            session(request).rollback();
            return ok();
         case "xa_start":
            session(request).start(xid(request), "join".equals(optStr(request, "flags"))
               ? XAResource.TMJOIN : XAResource.TMNOFLAGS);
            return ok();
         case "xa_end":
            session(request).end(xid(request), XAResource.TMSUCCESS);
            return ok();
         case "xa_prepare": {
            Map<String, Object> reply = ok();
            reply.put("vote", (long) session(request).prepare(xid(request)));
            return reply;
         }
         case "xa_commit":
            session(request).commit(xid(request), flag(request, "one_phase", false));
            return ok();
         case "xa_rollback":
            session(request).rollback(xid(request));
            return ok();
         case "xa_recover": {
            List<Object> found = new ArrayList<>();
            for (Xid xid : session(request).recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN)) {
               Map<String, Object> item = new LinkedHashMap<>();
               item.put("format", (long) xid.getFormatId());
               item.put("gtrid", toHex(xid.getGlobalTransactionId()));
               item.put("bqual", toHex(xid.getBranchQualifier()));
               found.add(item);
            }
            Map<String, Object> reply = ok();
            reply.put("xids", found);
            return reply;
         }
         case "consumer": {
            // window 0 (pull): the consumer is sent a message only when it receives; otherwise the locator's
            // window (0 too) with a listener, which asks for the next message once it has handled one
            ClientSession session = session(request);
            String id = str(request, "id");
            boolean pull = flag(request, "pull", false);
            boolean manual = flag(request, "manual_ack", false);
            ClientConsumer consumer = pull
               ? session.createConsumer(simple(str(request, "queue")), simple(optStr(request, "filter")), 0, -1, false)
               : session.createConsumer(simple(str(request, "queue")), simple(optStr(request, "filter")), false);
            consumers.put(id, consumer);
            consumerSession.put(id, str(request, "session"));
            manualAck.put(id, manual);
            delivered.put(id, new java.util.concurrent.ConcurrentHashMap<>());
            if (!pull && flag(request, "listen", false)) {
               consumer.setMessageHandler(message -> {
                  Map<String, Object> delivery = record(id, message);
                  if (!manual) {
                     try {
                        message.acknowledge();
                     } catch (ActiveMQException e) {
                        delivery.put("ack_error", e.getType().name());
                     }
                  }
               });
            }
            return ok();
         }
         case "ack":
            return ack(request);
         case "receive":
            return receive(request);
         case "close_consumer": {
            String id = str(request, "id");
            ClientConsumer consumer = consumers.remove(id);
            consumerSession.remove(id);
            manualAck.remove(id);
            delivered.remove(id);
            if (consumer != null) {
               consumer.close();
            }
            MessageConsumer jms = jmsConsumers.remove(id);
            if (jms != null) {
               jms.close();
               Connection connection = jmsConnections.remove(id);
               if (connection != null) {
                  connection.close();
               }
            }
            return ok();
         }
         case "deliveries": {
            List<Object> taken = new ArrayList<>();
            Map<String, Object> next;
            while ((next = deliveries.poll()) != null) {
               taken.add(next);
            }
            Map<String, Object> reply = ok();
            reply.put("deliveries", taken);
            return reply;
         }
         case "jms_consumer":
            return jmsConsumer(request);
         case "lb_type": {
            // whether the release's MessageLoadBalancingType has the value: what its broker.xml accepts
            Map<String, Object> reply = ok();
            Class<?> type = Class.forName("org.apache.activemq.artemis.core.server.cluster.impl.MessageLoadBalancingType");
            boolean exists = false;
            for (Object constant : type.getEnumConstants()) {
               exists |= constant.toString().equals(str(request, "name"));
            }
            reply.put("exists", exists);
            return reply;
         }
         default:
            throw new IllegalArgumentException("unknown command " + cmd);
      }
   }

   private Map<String, Object> manage(Node node, Map<String, Object> request) throws Exception {
      ClientMessage message = node.admin.createMessage(false);
      List<Object> params = Json.array(request.getOrDefault("params", new ArrayList<>()));
      ManagementHelper.putOperationInvocation(message, str(request, "resource"), str(request, "operation"),
                                              params.toArray());
      ClientMessage reply = node.requestor.request(message, 8000);
      if (reply == null) {
         throw new IllegalStateException("no management reply within 8 s");
      }
      Map<String, Object> result = ok();
      result.put("succeeded", ManagementHelper.hasOperationSucceeded(reply));
      SimpleString body = reply.getBodyBuffer().readNullableSimpleString();
      result.put("result", body == null ? null : body.toString());
      return result;
   }

   private static Map<String, Object> queueQuery(ClientSession.QueueQuery query) {
      Map<String, Object> reply = ok();
      reply.put("exists", query.isExists());
      reply.put("name", query.getName() == null ? null : query.getName().toString());
      reply.put("address", query.getAddress() == null ? null : query.getAddress().toString());
      reply.put("routing_type", query.getRoutingType() == null ? null : query.getRoutingType().name());
      reply.put("messages", query.getMessageCount());
      reply.put("consumers", query.getConsumerCount());
      reply.put("filter", query.getFilterString() == null ? null : query.getFilterString().toString());
      reply.put("auto_created", query.isAutoCreated());
      reply.put("purge_on_no_consumers", optionalFlag(query, "isPurgeOnNoConsumers"));
      reply.put("enabled", optionalFlag(query, "isEnabled"));
      return reply;
   }

   /** A boolean getter the release may lack (the queue query grew over the releases); null when it has none. */
   private static Boolean optionalFlag(Object target, String getter) {
      try {
         Object value = target.getClass().getMethod(getter).invoke(target);
         return value instanceof Boolean ? (Boolean) value : null;
      } catch (ReflectiveOperationException e) {
         return null;
      }
   }

   private static Map<String, Object> addressQuery(ClientSession.AddressQuery query) {
      Map<String, Object> reply = ok();
      reply.put("exists", query.isExists());
      List<Object> names = new ArrayList<>();
      for (SimpleString name : query.getQueueNames()) {
         names.add(name.toString());
      }
      reply.put("queues", names);
      reply.put("auto_create_queues", query.isAutoCreateQueues());
      reply.put("auto_create_addresses", query.isAutoCreateAddresses());
      return reply;
   }

   private Map<String, Object> send(ClientSession session, Map<String, Object> request) throws Exception {
      ClientMessage message = session.createMessage(flag(request, "durable", true));
      Map<String, Object> properties = Json.object(request.getOrDefault("properties", new LinkedHashMap<>()));
      for (Map.Entry<String, Object> entry : properties.entrySet()) {
         Map<String, Object> typed = Json.object(entry.getValue());
         String kind = str(typed, "kind");
         String value = str(typed, "value");
         SimpleString key = simple(entry.getKey());
         switch (kind) {
            case "string":
               message.putObjectProperty(key, value);
               break;
            case "simple_string":
               message.putObjectProperty(key, simple(value));
               break;
            case "bytes":
               message.putBytesProperty(key, hex(value));
               break;
            case "long":
               message.putLongProperty(key, Long.parseLong(value));
               break;
            case "boolean":
               message.putBooleanProperty(key, Boolean.parseBoolean(value));
               break;
            default:
               throw new IllegalArgumentException("unknown property kind " + kind);
         }
      }
      String routingType = optStr(request, "routing_type");
      if (routingType != null) {
         message.setRoutingType(RoutingType.valueOf(routingType));
      }
      try (ClientProducer producer = session.createProducer()) {
         producer.send(simple(str(request, "address")), message);
      }
      return ok();
   }

   /**
    * One message for a consumer without a listener: receiveImmediate (with "timeout_ms", receive). It is acknowledged
    * unless the consumer acknowledges later; with "record" it is also reported among the deliveries, as a listener's.
    */
   private Map<String, Object> receive(Map<String, Object> request) throws Exception {
      String id = str(request, "consumer");
      ClientConsumer consumer = consumers.get(id);
      if (consumer == null) {
         throw new IllegalArgumentException("no consumer " + id);
      }
      Object timeout = request.getOrDefault("timeout_ms", 0L);
      long millis = timeout instanceof Long ? (Long) timeout : 0L;
      ClientMessage message = millis <= 0 ? consumer.receiveImmediate() : consumer.receive(millis);
      Map<String, Object> reply = ok();
      if (message == null) {
         reply.put("message", null);
         return reply;
      }
      if (flag(request, "record", false)) {
         record(id, message);
      }
      if (!manualAck.getOrDefault(id, false)) {
         message.acknowledge();
      }
      reply.put("message", describe(message));
      return reply;
   }

   /**
    * Before a rollback, take the stale forced-delivery answers out of the session's consumers' buffers. A receiveImmediate
    * on a consumer of window 0 asks the broker to force a delivery, whose answer (a message carrying
    * FORCED_DELIVERY_MESSAGE, ServerConsumerImpl.forceDelivery, sent without taking credits) may arrive after the real
    * message the receive returned, and stays buffered. ClientSessionImpl.rollback clears every consumer's buffer and
    * gives back credits for each message in it (ClientConsumerImpl.clear, flowControlBeforeConsumption), the stale answer
    * too: the broker then holds credits for the consumer and pushes it the messages the rollback returns, which a
    * consumer of window 0 never asked for (found against Artemis 2.40.0).
    */
   private void dropStaleForcedDeliveries(String session) throws Exception {
      for (Map.Entry<String, String> entry : consumerSession.entrySet()) {
         ClientConsumer consumer = consumers.get(entry.getKey());
         if (!session.equals(entry.getValue()) || consumer == null) {
            continue;
         }
         java.lang.reflect.Field field = consumer.getClass().getDeclaredField("buffer");
         field.setAccessible(true);
         synchronized (consumer) {
            org.apache.activemq.artemis.utils.collections.PriorityLinkedList<?> buffer =
               (org.apache.activemq.artemis.utils.collections.PriorityLinkedList<?>) field.get(consumer);
            try (org.apache.activemq.artemis.utils.collections.LinkedListIterator<?> buffered = buffer.iterator()) {
               while (buffered.hasNext()) {
                  Object message = buffered.next();
                  if (message instanceof ClientMessage && ((ClientMessage) message).containsProperty(
                        org.apache.activemq.artemis.core.client.impl.ClientConsumerImpl.FORCED_DELIVERY_MESSAGE)) {
                     buffered.remove();
                  }
               }
            }
         }
      }
   }

   /** A delivery to consumer "id", kept for a later "ack" and reported by "deliveries". */
   private Map<String, Object> record(String id, ClientMessage message) {
      Map<String, Object> delivery = describe(message);
      delivery.put("consumer", id);
      Object tag = message.getObjectProperty(simple("_BS_TAG"));
      Map<String, ClientMessage> kept = delivered.get(id);
      if (tag != null && kept != null) {
         kept.put(tag.toString(), message);
      }
      deliveries.add(delivery);
      return delivery;
   }

   /**
    * Acknowledge, for consumer "consumer", the message tagged "tag" it was delivered (ClientMessage.acknowledge; the
    * sessions acknowledge at once and block until the broker has handled it). Without a tag, an acknowledgement of a
    * message the consumer never took: the same frame (SessionAcknowledgeMessage, consumer and message ID) naming an ID
    * that no message has, which the broker looks for among what the consumer holds (ServerConsumerImpl.acknowledge).
    */
   private Map<String, Object> ack(Map<String, Object> request) throws Exception {
      String id = str(request, "consumer");
      ClientConsumer consumer = consumers.get(id);
      Map<String, ClientMessage> kept = delivered.get(id);
      if (consumer == null || kept == null) {
         throw new IllegalArgumentException("no consumer " + id);
      }
      String tag = optStr(request, "tag");
      if (tag == null) {
         ClientMessage standIn = sessions.get(consumerSession.get(id)).createMessage(false);
         standIn.setMessageID(-1L);
         ((org.apache.activemq.artemis.core.client.impl.ClientConsumerInternal) consumer).acknowledge(standIn);
         return ok();
      }
      ClientMessage message = kept.get(tag);
      if (message == null) {
         throw new IllegalArgumentException("consumer " + id + " was never delivered " + tag);
      }
      message.acknowledge();
      return ok();
   }

   /** A message as its string-valued properties (brokerspec's tags), its address and its delivery count. */
   private static Map<String, Object> describe(ClientMessage message) {
      Map<String, Object> properties = new LinkedHashMap<>();
      for (SimpleString name : message.getPropertyNames()) {
         Object value = message.getObjectProperty(name);
         properties.put(name.toString(), value instanceof byte[] ? "bytes:" + toHex((byte[]) value) : String.valueOf(value));
      }
      Map<String, Object> described = new LinkedHashMap<>();
      described.put("address", message.getAddress());
      described.put("delivery_count", (long) message.getDeliveryCount());
      described.put("properties", properties);
      return described;
   }

   /** A consumer opened through the core JMS client or Qpid JMS (AMQP), which do their own auto-creation. */
   private Map<String, Object> jmsConsumer(Map<String, Object> request) throws Exception {
      String id = str(request, "id");
      String protocol = str(request, "protocol");
      String url = str(request, "url");
      ConnectionFactory factory;
      if ("core".equals(protocol)) {
         factory = new org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory(url);
      } else if ("amqp".equals(protocol)) {
         factory = new org.apache.qpid.jms.JmsConnectionFactory(url);
      } else {
         throw new IllegalArgumentException("unknown JMS protocol " + protocol);
      }
      Connection connection = factory.createConnection();
      try {
         javax.jms.Session session = connection.createSession(false, javax.jms.Session.AUTO_ACKNOWLEDGE);
         String name = str(request, "destination");
         Destination destination = "topic".equals(str(request, "kind")) ? session.createTopic(name) : session.createQueue(name);
         MessageConsumer consumer = session.createConsumer(destination);
         jmsConnections.put(id, connection);
         jmsConsumers.put(id, consumer);
      } catch (Exception e) {
         quietly(connection::close);
         throw e;
      }
      return ok();
   }

   private void closeSession(String id) {
      for (String consumer : new ArrayList<>(consumerSession.keySet())) {
         if (id.equals(consumerSession.get(consumer))) {
            consumerSession.remove(consumer);
            manualAck.remove(consumer);
            delivered.remove(consumer);
            ClientConsumer gone = consumers.remove(consumer);
            if (gone != null) {
               quietly(gone::close);
            }
         }
      }
      ClientSession session = sessions.remove(id);
      sessionNode.remove(id);
      if (session != null) {
         quietly(session::close);
      }
   }

   private void disconnect(String name) {
      for (String id : new ArrayList<>(sessionNode.keySet())) {
         if (name.equals(sessionNode.get(id))) {
            closeSession(id);
         }
      }
      Node node = nodes.remove(name);
      if (node != null) {
         node.close();
      }
   }

   private void closeAll() {
      for (String id : new ArrayList<>(jmsConnections.keySet())) {
         Connection connection = jmsConnections.remove(id);
         quietly(connection::close);
      }
      jmsConsumers.clear();
      for (String name : new ArrayList<>(nodes.keySet())) {
         disconnect(name);
      }
   }

   /** The request's "xid" as an Xid the broker compares by value (format, global transaction ID, branch). */
   private static Xid xid(Map<String, Object> request) {
      Map<String, Object> fields = Json.object(request.get("xid"));
      Object format = fields.get("format");
      if (!(format instanceof Long)) {
         throw new IllegalArgumentException("xid format must be an integer, not " + format);
      }
      return new BranchId((int) (long) (Long) format, hex(str(fields, "gtrid")), hex(str(fields, "bqual")));
   }

   /** An XA branch identifier, equal to any other with the same three parts. */
   private static final class BranchId implements Xid {
      private final int format;
      private final byte[] global;
      private final byte[] branch;

      BranchId(int format, byte[] global, byte[] branch) {
         this.format = format;
         this.global = global;
         this.branch = branch;
      }

      @Override
      public int getFormatId() {
         return format;
      }

      @Override
      public byte[] getGlobalTransactionId() {
         return global.clone();
      }

      @Override
      public byte[] getBranchQualifier() {
         return branch.clone();
      }

      @Override
      public boolean equals(Object other) {
         if (!(other instanceof Xid)) {
            return false;
         }
         Xid that = (Xid) other;
         return format == that.getFormatId() && Arrays.equals(global, that.getGlobalTransactionId())
            && Arrays.equals(branch, that.getBranchQualifier());
      }

      @Override
      public int hashCode() {
         return 31 * (31 * format + Arrays.hashCode(global)) + Arrays.hashCode(branch);
      }

      @Override
      public String toString() {
         return "BranchId(" + format + ", " + toHex(global) + ", " + toHex(branch) + ")";
      }
   }

   static byte[] hex(String text) {
      byte[] bytes = new byte[text.length() / 2];
      for (int i = 0; i < bytes.length; i++) {
         bytes[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
      }
      return bytes;
   }

   static String toHex(byte[] bytes) {
      StringBuilder text = new StringBuilder();
      for (byte b : bytes) {
         text.append(String.format("%02x", b & 0xff));
      }
      return text.toString();
   }

   /** The smallest JSON reader and writer the driver needs: objects, arrays, strings, integers, booleans, null. */
   static final class Json {
      private final String text;
      private int at;

      private Json(String text) {
         this.text = text;
      }

      static Object parse(String text) {
         Json json = new Json(text);
         Object value = json.value();
         json.space();
         if (json.at != text.length()) {
            throw new IllegalArgumentException("trailing text at column " + (json.at + 1));
         }
         return value;
      }

      @SuppressWarnings("unchecked")
      static Map<String, Object> object(Object value) {
         if (!(value instanceof Map)) {
            throw new IllegalArgumentException("expected a JSON object, got " + value);
         }
         return (Map<String, Object>) value;
      }

      @SuppressWarnings("unchecked")
      static List<Object> array(Object value) {
         if (!(value instanceof List)) {
            throw new IllegalArgumentException("expected a JSON array, got " + value);
         }
         return (List<Object>) value;
      }

      private void space() {
         while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
         }
      }

      private Object value() {
         space();
         if (at >= text.length()) {
            throw new IllegalArgumentException("unexpected end of JSON");
         }
         char c = text.charAt(at);
         if (c == '{') {
            Map<String, Object> map = new LinkedHashMap<>();
            at++;
            space();
            if (text.charAt(at) == '}') {
               at++;
               return map;
            }
            while (true) {
               space();
               String key = string();
               space();
               expect(':');
               map.put(key, value());
               space();
               if (text.charAt(at) == ',') {
                  at++;
                  continue;
               }
               expect('}');
               return map;
            }
         }
         if (c == '[') {
            List<Object> list = new ArrayList<>();
            at++;
            space();
            if (text.charAt(at) == ']') {
               at++;
               return list;
            }
            while (true) {
               list.add(value());
               space();
               if (text.charAt(at) == ',') {
                  at++;
                  continue;
               }
               expect(']');
               return list;
            }
         }
         if (c == '"') {
            return string();
         }
         if (text.startsWith("true", at)) {
            at += 4;
            return Boolean.TRUE;
         }
         if (text.startsWith("false", at)) {
            at += 5;
            return Boolean.FALSE;
         }
         if (text.startsWith("null", at)) {
            at += 4;
            return null;
         }
         int start = at;
         if (c == '-') {
            at++;
         }
         while (at < text.length() && Character.isDigit(text.charAt(at))) {
            at++;
         }
         if (start == at) {
            throw new IllegalArgumentException("unexpected character at column " + (at + 1));
         }
         return Long.parseLong(text.substring(start, at));
      }

      private void expect(char c) {
         if (at >= text.length() || text.charAt(at) != c) {
            throw new IllegalArgumentException("expected '" + c + "' at column " + (at + 1));
         }
         at++;
      }

      private String string() {
         expect('"');
         StringBuilder out = new StringBuilder();
         while (true) {
            char c = text.charAt(at++);
            if (c == '"') {
               return out.toString();
            }
            if (c != '\\') {
               out.append(c);
               continue;
            }
            char e = text.charAt(at++);
            switch (e) {
               case 'n': out.append('\n'); break;
               case 't': out.append('\t'); break;
               case 'r': out.append('\r'); break;
               case 'b': out.append('\b'); break;
               case 'f': out.append('\f'); break;
               case 'u':
                  out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                  at += 4;
                  break;
               default: out.append(e);
            }
         }
      }

      static String write(Object value) {
         StringBuilder out = new StringBuilder();
         write(out, value);
         return out.toString();
      }

      private static void write(StringBuilder out, Object value) {
         if (value == null) {
            out.append("null");
         } else if (value instanceof Boolean || value instanceof Long || value instanceof Integer) {
            out.append(value);
         } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
               if (!first) {
                  out.append(',');
               }
               first = false;
               writeString(out, String.valueOf(entry.getKey()));
               out.append(':');
               write(out, entry.getValue());
            }
            out.append('}');
         } else if (value instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object item : (List<?>) value) {
               if (!first) {
                  out.append(',');
               }
               first = false;
               write(out, item);
            }
            out.append(']');
         } else {
            writeString(out, String.valueOf(value));
         }
      }

      private static void writeString(StringBuilder out, String text) {
         out.append('"');
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
         out.append('"');
      }
   }
}
