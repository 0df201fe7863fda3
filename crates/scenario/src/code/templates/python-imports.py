import base64
import os
import sys
import time
import uuid
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, TypeVar, Union

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.servicebus import NEXT_AVAILABLE_SESSION, ServiceBusClient, ServiceBusMessage, ServiceBusReceivedMessage, ServiceBusReceiveMode, ServiceBusReceiver, ServiceBusSender
from azure.servicebus.management import ServiceBusAdministrationClient, CorrelationRuleFilter, SqlRuleFilter, SqlRuleAction, TrueRuleFilter

